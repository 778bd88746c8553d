// --cpu-budget on this machine's real cpu hierarchy: a child process moves itself into a budget of
// 0.2 cores, spins, and the kernel reports the budget's cgroup throttled; released, nothing is left.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/util/index.js';
import { skipNote } from '../support/skip-note.js';

const own = /^\d+:cpu(?:,[^:]*)?:(.*)$/m.exec(existsSync('/proc/self/cgroup') ? spawnSync('cat', ['/proc/self/cgroup'], { encoding: 'utf8' }).stdout : '');
const cpuDir = own ? join('/sys/fs/cgroup/cpu', own[1]!) : null;
const skip = !cpuDir || !existsSync(join(cpuDir, 'cpu.cfs_quota_us')) || process.getuid?.() !== 0 ? 'needs root and a writable cgroup v1 cpu hierarchy' : null;
if (skip) skipNote('cpu-budget.slow.test.ts (a real CPU quota)', skip);

const CHILD = `
import { applyCpuBudget, cpuQuotaCores, throttledSeconds } from './src/cgroup/index.ts';
import { readFileSync } from 'node:fs';
const b = applyCpuBudget(0.2);
const inside = readFileSync('/proc/self/cgroup', 'utf8').split('\\n').find((l) => /^\\d+:cpu(,|:)/.test(l));
const end = Date.now() + 600;
while (Date.now() < end) {}
const throttled = throttledSeconds(b);
const quota = readFileSync(b.dir + '/cpu.cfs_quota_us', 'utf8').trim();
const cores = cpuQuotaCores();
b.release();
console.log(JSON.stringify({ dir: b.dir, inside, throttled, quota, cores, after: cpuQuotaCores() }));
`;

describe.skipIf(skip !== null)('a real CPU budget', () => {
  it('the kernel throttles the process inside it, and release leaves no cgroup', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', CHILD], { cwd: PROJECT_ROOT, encoding: 'utf8', timeout: 30_000 });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as {
      dir: string;
      inside: string;
      throttled: number;
      quota: string;
      cores: number | null;
      after: number | null;
    };
    expect(out.quota).toBe('20000');
    // What the pods' start timeout reads: the budget inside, the machine's own (usually none) once released.
    expect(out.cores).toBe(0.2);
    expect(out.after === null || out.after > 0.2).toBe(true);
    expect(out.inside).toContain(`/attestorm/budget-`);
    expect(out.throttled).toBeGreaterThan(0);
    expect(existsSync(out.dir)).toBe(false);
  });
});
