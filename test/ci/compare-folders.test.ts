// The verdict table `attestorm report <before> <after>` prints, over real run folders.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareRunFolders, parseTolerances } from '../../src/ci/index.js';
import { ConfigError } from '../../src/errors.js';
import { results, writeRunFolder } from './fixture.js';

let tmp: string;
let before: string;
let after: string;
let other: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), 'attestorm-cmp-'));
  before = await writeRunFolder(tmp, 'before', results({ variants: [{ name: 'pre', peakMiB: 100 }] }));
  after = await writeRunFolder(tmp, 'after', results({ variants: [{ name: 'pre', peakMiB: 120 }] }));
  other = await writeRunFolder(tmp, 'other', results({ scenario: 'scaled', variants: [{ name: 'pre', peakMiB: 120 }] }));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('compareRunFolders', () => {
  it('prints the same table as run --baseline, and Markdown for baseline.md', () => {
    const { text, markdown, comparisons } = compareRunFolders([before, after], parseTolerances(undefined));
    expect(comparisons[0]!.comparison!.regressed).toBe(1);
    expect(text).toMatch(/\| pre +\| peak memory +\| 100\.0 MiB +\| 120\.0 MiB +\| \+20\.0% +\| 10% +\| REGRESSED/);
    expect(markdown).toContain('## after against before');
    expect(markdown).toContain('| pre | peak memory | 100.0 MiB | 120.0 MiB | +20.0% | 10% | **REGRESSED** |');
    expect(markdown).toContain('Rule: Each figure is compared as a range');
  });

  it('a run of another scenario gets the reason instead of verdicts', () => {
    const { text, comparisons } = compareRunFolders([before, after, other], parseTolerances('25%'));
    expect(comparisons.map((c) => c.comparison?.regressed ?? null)).toEqual([0, null]);
    expect(text).toContain(
      `${other}: no baseline verdicts: baseline ${path.join(before, 'results.json')}: refused: it is a run of scenario "quick", this run is of "scaled"`,
    );
  });

  it('needs two folders', () => {
    expect(() => compareRunFolders([before], parseTolerances(undefined))).toThrow(ConfigError);
  });
});
