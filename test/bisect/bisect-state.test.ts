// bisect.json read back as written, refused when it is not a bisect's, compared with what a resume
// is asked; and the reports rendered from it alone.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  BISECT_SCHEMA_VERSION,
  readState,
  renderBisectHtml,
  renderBisectMarkdown,
  settingsDifferences,
  timeLeft,
  writeState,
  type BisectState,
  type BisectStep,
} from '../../src/bisect/index.js';
import { ConfigError } from '../../src/errors.js';

const root = mkdtempSync(join(tmpdir(), 'attestorm-bisect-state-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const sha = (c: string) => c.repeat(40);
const step = (n: number, c: string, mark: BisectStep['mark'], over: Partial<BisectStep> = {}): BisectStep => ({
  n,
  commit: sha(c),
  subject: `change ${c} | <b>`,
  mark,
  reason:
    mark === 'bad'
      ? 'oomKilled: OOM-killed 1 time(s) (in load), expected none'
      : mark === 'good'
        ? 'oomKilled: not OOM-killed, expected none'
        : 'the build failed: exit 1',
  verdict: mark === 'skip' ? null : mark === 'bad' ? 'failed' : 'passed',
  figures:
    mark === 'skip'
      ? null
      : {
          peakMemoryBytes: (mark === 'bad' ? 512 : 140) * 2 ** 20,
          memoryLimitBytes: 512 * 2 ** 20,
          memoryMeasure: 'working-set',
          oomKills: mark === 'bad' ? 2 : 0,
          okRps: 210.44,
          kubeletRequestsPerSecond: 0.22,
          repetitions: 1,
        },
  folder: `steps/0${n}-${c.repeat(12)}`,
  runDir: mark === 'skip' ? null : `steps/0${n}-${c.repeat(12)}/run`,
  build: { ok: mark !== 'skip', seconds: 120, replaced: [] },
  runSeconds: mark === 'skip' ? null : 300,
  seconds: 420,
  startedAt: '2026-01-01T00:00:00Z',
  ...over,
});

function state(over: Partial<BisectState> = {}): BisectState {
  return {
    schemaVersion: BISECT_SCHEMA_VERSION,
    command: 'attestorm bisect s.yaml --good v1 --bad v2',
    settings: {
      scenario: '/s/seed.yaml',
      variant: 'v1-15-3',
      source: '/src/spire',
      good: { ref: 'v1.15.2', commit: sha('a') },
      bad: { ref: 'v1.15.3', commit: sha('f') },
      repetitions: null,
      duration: null,
      set: [],
      build: { kind: 'spire', replace: [], goCache: null },
      keepBuilds: false,
    },
    runner: { pid: 1, hostname: 'h', startTicks: null },
    status: 'complete',
    startedAt: '2026-01-01T00:00:00Z',
    endedAt: '2026-01-01T01:00:00Z',
    rangeCommits: 59,
    attempts: 3,
    steps: [step(1, 'b', 'good'), step(2, 'c', 'skip'), step(3, 'd', 'bad')],
    current: null,
    unfinished: [],
    outcome: { kind: 'first-bad', commit: sha('d'), subject: 'agent: k8s: coordinate kubelet pod list fetching (#7085)' },
    ...over,
  };
}

describe('bisect.json', () => {
  it('reads back what was written, and says what is wrong with a file that is not a bisect state', () => {
    writeState(root, state());
    expect(readState(root)).toEqual(state());
    expect(readState(join(root, 'none'))).toBeNull();
    writeFileSync(join(root, 'bisect.json'), JSON.stringify({ ...state(), steps: [{ n: 1 }] }));
    expect(() => readState(root)).toThrow(ConfigError);
    expect(() => readState(root)).toThrow(/bisect\.json: not a bisect state this attestorm reads \(steps\.0\.commit/);
  });

  it('names the settings a resume was asked differently', () => {
    const a = state().settings;
    expect(settingsDifferences(a, { ...a })).toEqual([]);
    expect(settingsDifferences(a, { ...a, repetitions: 3 })).toEqual(['repetitions: null there, 3 now']);
  });
});

describe('time left', () => {
  it("counts git's steps with this one, at the pace of the steps measured", () => {
    expect(timeLeft({ steps: [], rangeCommits: 59 }, 5)).toBe('6 steps left with this one; the time they take is known after the first');
    expect(timeLeft({ steps: [step(1, 'b', 'good', { seconds: 360 }), step(2, 'c', 'bad', { seconds: 480 })], rangeCommits: 59 }, 2)).toBe(
      '3 steps left with this one, about 21 min at the 7.0 min a step has taken so far',
    );
    // A merge base to test first: git gives no count; a bisection of the whole range bounds it.
    expect(timeLeft({ steps: [], rangeCommits: 59 }, null)).toMatch(/^about 6 steps left with this one/);
  });
});

describe('bisect reports', () => {
  it('bisect.md: the outcome, the range, and a row per step with its figures', () => {
    const md = renderBisectMarkdown(state());
    expect(md).toContain(`**first bad commit: ${sha('d')} agent: k8s: coordinate kubelet pod list fetching (#7085)**`);
    expect(md).toContain(`- range: \`good v1.15.2 (aaaaaaaaa) .. bad v1.15.3 (fffffffff), 59 commits\``);
    expect(md).toContain(
      '| 3 | ddddddddd | change d \\| <b> | bad | failed | ≥ 512.0 | 2 | 210.4 | 0.22 | 120 | 300 | oomKilled: OOM-killed 1 time(s) (in load), expected none |',
    );
    expect(md).toContain('| 2 | ccccccccc | change c \\| <b> | skip | — | — | — | — | — | 120 | — | the build failed: exit 1 |');
  });

  it('bisect.html: self-contained, escaped, candidates listed when skips leave it open', () => {
    const html = renderBisectHtml(
      state({
        outcome: {
          kind: 'candidates',
          commits: [
            { commit: sha('c'), subject: 'c <i>' },
            { commit: sha('d'), subject: 'd' },
          ],
        },
      }),
    );
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href="http/);
    expect(html).toContain('change d | &lt;b&gt;');
    expect(html).toContain('skipped commits leave it open: the first bad commit is one of 2: ccccccccc, ddddddddd');
    expect(html).toContain(`<li><code>${sha('c')}</code> c &lt;i&gt;</li>`);
    expect(html).toContain('<a href="steps/03-dddddddddddd/run/">');
  });

  it('an interrupted bisect says so, and which step was under way', () => {
    const md = renderBisectMarkdown(
      state({ status: 'interrupted', statusDetail: 'SIGINT during step 4 (eeeeeeeee); the same command resumes it', outcome: null }),
    );
    expect(md).toContain('**interrupted: SIGINT during step 4 (eeeeeeeee); the same command resumes it**');
  });
});
