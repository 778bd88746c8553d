// --cpu-budget's cgroup on a v1 fixture tree (the files a kernel would have), and its bad input. The
// real v1 hierarchy, with a real throttled process, is in cpu-budget.slow.test.ts; v2 needs a real
// kernel's rules (a budget cgroup holding the runner could delegate nothing) and runs in test/vm.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { applyCpuBudget, checkCpuBudget } from '../../src/cgroup/index.js';

const root = mkdtempSync(join(tmpdir(), 'attestorm-budget-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function fixture(files: Record<string, string>): string {
  const dir = mkdtempSync(join(root, 'fs-'));
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(join(dir, p, '..'), { recursive: true });
    writeFileSync(join(dir, p), text);
  }
  return dir;
}

describe('applyCpuBudget', () => {
  it('v1: a quota of cores × 100 ms per 100 ms in <own cpu cgroup>/attestorm/budget-<pid>; release moves back and removes it', () => {
    const fs = fixture({ 'cpu/user.slice/cpu.cfs_quota_us': '-1', 'cpu/user.slice/cgroup.procs': '' });
    const b = applyCpuBudget(1.5, { root: fs, selfCgroup: '4:cpu:/user.slice\n3:memory:/user.slice\n', pid: 4242, machineCpus: 2 });
    const dir = join(fs, 'cpu/user.slice/attestorm/budget-4242');
    expect(b).toMatchObject({ cores: 1.5, dir, version: 'v1' });
    expect(readFileSync(join(dir, 'cpu.cfs_period_us'), 'utf8')).toBe('100000');
    expect(readFileSync(join(dir, 'cpu.cfs_quota_us'), 'utf8')).toBe('150000');
    expect(readFileSync(join(dir, 'cgroup.procs'), 'utf8')).toBe('4242');
    // A fixture directory holds the files written into it, so rmdir cannot remove it as a kernel would.
    b.release();
    b.release();
    expect(readFileSync(join(fs, 'cpu/user.slice/cgroup.procs'), 'utf8')).toBe('4242');
  });

  it('no cpu controller: a PlatformError saying where it looked; bad numbers: a ConfigError naming the flag', () => {
    const fs = fixture({ 'runner.scope/cgroup.controllers': 'memory pids' });
    expect(() => applyCpuBudget(1, { root: fs, selfCgroup: '0::/runner.scope\n', machineCpus: 2 })).toThrow(/--cpu-budget needs a cpu cgroup controller/);
    expect(existsSync(join(fs, 'runner.scope/attestorm'))).toBe(false);
    expect(() => checkCpuBudget(0, '--cpu-budget', 2)).toThrow('--cpu-budget must be a number of cores of at least 0.1 (e.g. 1.5), got 0');
    expect(() => checkCpuBudget(Number.NaN, '--cpu-budget', 2)).toThrow('got NaN');
    expect(() => checkCpuBudget(3, '--cpu-budget', 2)).toThrow('--cpu-budget asks for 3 cores, but this machine has 2');
  });
});
