// A small sweep through the real CLI: two values of load.workersPerPod against a real agent in a
// memory cgroup with a limit so small that the unlimited agent dies at the larger value.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectCgroupHost } from '../../src/cgroup/index.js';
import type { SweepResult } from '../../src/sweep/index.js';
import { PROJECT_ROOT } from '../../src/util/index.js';
import { skipNote } from '../support/skip-note.js';

const { host, reason } = detectCgroupHost();
if (!host) skipNote('every test of sweep.slow.test.ts', reason);
const dir = mkdtempSync(join(tmpdir(), 'attestorm-sweep-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(!host)(`attestorm sweep (${reason})`, () => {
  it('runs every value, writes sweep.json with a point per value and variant, the boundary, and report.html', () => {
    const scenario = join(dir, 'tiny.yaml');
    writeFileSync(
      scenario,
      [
        'name: tiny-sweep',
        'duration: 4s',
        'warmup: 1s',
        'agent:',
        '  memoryLimit: 128Mi',
        '  startTimeout: 60s',
        '  restart: { initialBackoff: 30s }',
        'variants:',
        '  - { name: off, agent: { placement: disabled } }',
        'load:',
        '  pods: 1',
        '  workersPerPod: 1',
        '',
      ].join('\n'),
    );
    const out = join(dir, 'sweep');
    const stdout = execFileSync(
      process.execPath,
      [join(PROJECT_ROOT, 'bin/attestorm.js'), 'sweep', scenario, '--vary', 'load.workersPerPod=1,2', '--out', out],
      {
        cwd: PROJECT_ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: 240_000,
      },
    );
    const r = JSON.parse(readFileSync(join(out, 'sweep.json'), 'utf8')) as SweepResult;
    expect(r.status).toBe('complete');
    expect(r.values).toEqual(['1', '2']);
    expect(r.points.map((p) => [p.value, p.variant])).toEqual([
      ['1', 'off'],
      ['2', 'off'],
    ]);
    for (const p of r.points) {
      expect(p.error).toBeUndefined();
      expect(p.peakMemoryBytes).toBeGreaterThan(10 * 2 ** 20);
      expect(existsSync(join(out, p.runDir, 'results.json'))).toBe(true);
    }
    // The boundary follows the points: the first value with an OOM kill, or null.
    const killed = r.points.find((p) => p.oomKills > 0);
    expect(r.boundaries.off).toBe(killed ? killed.value : null);
    expect(stdout).toContain(killed ? `off: first OOM-killed at load.workersPerPod=${killed.value}` : 'off: never OOM-killed');
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toContain('attestorm sweep: tiny-sweep over load.workersPerPod');
  });
});
