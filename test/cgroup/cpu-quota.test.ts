// The CPU quota a process runs under, read from its cgroup and the ones above it (fixture trees of
// both versions: this machine is v1, GitHub's runners v2).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cpuQuotaCores } from '../../src/cgroup/index.js';

const dir = mkdtempSync(join(tmpdir(), 'attestorm-quota-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(dir, 'root-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('cpuQuotaCores', () => {
  it('v1: the smallest quota on the way up, in cores', () => {
    const root = tree({
      'cpu/cpu.cfs_quota_us': '-1\n',
      'cpu/cpu.cfs_period_us': '100000\n',
      'cpu/a/cpu.cfs_quota_us': '150000\n',
      'cpu/a/cpu.cfs_period_us': '100000\n',
      'cpu/a/b/cpu.cfs_quota_us': '-1\n',
      'cpu/a/b/cpu.cfs_period_us': '100000\n',
    });
    expect(cpuQuotaCores({ root, selfCgroup: '4:cpu,cpuacct:/a/b\n' })).toBe(1.5);
  });

  it('v2: cpu.max of the process\'s cgroup or a parent; "max" is no limit', () => {
    const root = tree({ 'cpu.max': 'max 100000\n', 'x/cpu.max': '120000 100000\n', 'x/y/cpu.max': 'max 100000\n' });
    expect(cpuQuotaCores({ root, selfCgroup: '0::/x/y\n' })).toBe(1.2);
    expect(cpuQuotaCores({ root, selfCgroup: '0::/\n' })).toBeNull();
  });

  it('no quota anywhere, or nothing readable: null', () => {
    expect(cpuQuotaCores({ root: join(dir, 'absent'), selfCgroup: '4:cpu,cpuacct:/a\n' })).toBeNull();
    expect(cpuQuotaCores({ root: dir, selfCgroup: '' })).toBeNull();
  });
});
