import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AttestationError, attestorNames, createAttestors } from '../../src/agent/attestor.js';
import { createUnixAttestorWith, readIdNames } from '../../src/agent/attestor-unix.js';
import { parseAgentConfig } from '../../src/agent/config.js';
import type { CallerCreds } from '../../src/agent/types.js';
import { ConfigError } from '../../src/errors.js';

const tmp = mkdtempSync(join(tmpdir(), 'attestorm-unix-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(tmp, { recursive: true, force: true });
});

const creds = (pid: number, uid = 0, gid = 0): CallerCreds => ({ pid, uid, gid, startTime: null });
const values = (sel: { type: string; value: string }[]) => sel.map((s) => `${s.type}:${s.value}`);

function statusLines(pid: number): { uid: number; gid: number; groups: number[] } {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) =>
    text
      .split('\n')
      .find((l) => l.startsWith(`${name}:`))!
      .slice(name.length + 1)
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  return { uid: field('Uid')[0]!, gid: field('Gid')[0]!, groups: field('Groups') };
}

function realUnix(over: Partial<Parameters<typeof createUnixAttestorWith>[0]> = {}) {
  return createUnixAttestorWith({ procRoot: '/proc', etcDir: '/etc', workloadPath: false, workloadSha256: false, maxExeBytes: 64 * 2 ** 20, ...over });
}

describe('unix attestor on the real /proc', () => {
  it('attests the test process itself: ids and resolvable names', async () => {
    const s = statusLines(process.pid);
    const got = values(await realUnix().attest(creds(process.pid)));
    const users = readIdNames('/etc/passwd');
    const groups = readIdNames('/etc/group');
    const want = [`unix:uid:${s.uid}`];
    if (users.has(s.uid)) want.push(`unix:user:${users.get(s.uid)}`);
    want.push(`unix:gid:${s.gid}`);
    if (groups.has(s.gid)) want.push(`unix:group:${groups.get(s.gid)}`);
    for (const g of s.groups) {
      want.push(`unix:supplementary_gid:${g}`);
      if (groups.has(g)) want.push(`unix:supplementary_group:${groups.get(g)}`);
    }
    expect(got).toEqual(want);
    // root exists on every Linux box this runs on
    if (s.uid === 0) expect(got).toContain('unix:user:root');
    else expect(got).not.toContain('unix:user:root');
  });

  it('attests a spawned child, with path and sha256 of its executable', async () => {
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    children.push(child);
    await new Promise((r) => child.once('spawn', r));
    const exe = realpathSync(`/proc/${child.pid}/exe`);
    const got = values(await realUnix({ workloadPath: true, workloadSha256: true }).attest(creds(child.pid!)));
    expect(got).toContain(`unix:path:${exe}`);
    expect(got).toContain(`unix:sha256:${createHash('sha256').update(readFileSync(exe)).digest('hex')}`);
    expect(got[0]).toBe(`unix:uid:${process.getuid!()}`);
    child.kill('SIGKILL');
  });

  it('refuses to hash an executable above maxExeBytes', async () => {
    const err = await realUnix({ workloadSha256: true, maxExeBytes: 1000 })
      .attest(creds(process.pid))
      .catch((e) => e);
    expect(err).toBeInstanceOf(AttestationError);
    expect(err.reason).toBe('exe-too-large');
    expect(err.message).toMatch(/above unix\.maxExeBytes \(1000\); not hashed/);
  });

  it('a process that exited: process-gone', async () => {
    const child = spawn('true', { stdio: 'ignore' });
    const pid = child.pid!;
    await new Promise((r) => child.once('exit', r));
    const err = await realUnix()
      .attest(creds(pid))
      .catch((e) => e);
    expect(err).toBeInstanceOf(AttestationError);
    expect(err.reason).toBe('process-gone');
    expect(err.message).toMatch(new RegExp(`unix attestor: cannot read status of pid ${pid}`));
  });
});

describe('unix attestor on a fake proc root and /etc', () => {
  // FAKE proc root: directories shaped like /proc/<pid>, so ids no real process here has can be tested.
  const procRoot = join(tmp, 'proc');
  const etcDir = join(tmp, 'etc');
  mkdirSync(join(procRoot, '4242'), { recursive: true });
  mkdirSync(etcDir);
  writeFileSync(
    join(procRoot, '4242', 'status'),
    ['Name:\tworker', 'State:\tS (sleeping)', 'Uid:\t1234\t1234\t1234\t1234', 'Gid:\t5678\t5678\t5678\t5678', 'Groups:\t5678 27 999 ', ''].join('\n'),
  );
  const bin = join(tmp, 'worker-bin');
  writeFileSync(bin, 'not really an ELF');
  symlinkSync(bin, join(procRoot, '4242', 'exe'));
  writeFileSync(join(etcDir, 'passwd'), 'root:x:0:0:root:/root:/bin/bash\n# comment\nalice:x:1234:5678::/home/alice:/bin/sh\nalias:x:1234:1::/:/bin/false\n');
  writeFileSync(join(etcDir, 'group'), 'root:x:0:\nsudo:x:27:alice\nstaff:x:5678:\n');

  it('ids, names where resolvable (999 has none), supplementary groups', async () => {
    const a = createUnixAttestorWith({ procRoot, etcDir, workloadPath: true, workloadSha256: true, maxExeBytes: 1 << 20 });
    expect(values(await a.attest(creds(4242, 1234, 5678)))).toEqual([
      'unix:uid:1234',
      'unix:user:alice',
      'unix:gid:5678',
      'unix:group:staff',
      'unix:supplementary_gid:5678',
      'unix:supplementary_group:staff',
      'unix:supplementary_gid:27',
      'unix:supplementary_group:sudo',
      'unix:supplementary_gid:999',
      `unix:path:${bin}`,
      `unix:sha256:${createHash('sha256').update('not really an ELF').digest('hex')}`,
    ]);
  });

  it('a status file without Uid/Gid is an attestation failure', async () => {
    mkdirSync(join(procRoot, '77'));
    writeFileSync(join(procRoot, '77', 'status'), 'Name:\tbroken\n');
    const a = createUnixAttestorWith({ procRoot, etcDir, workloadPath: false, workloadSha256: false, maxExeBytes: 0 });
    await expect(a.attest(creds(77))).rejects.toThrow(AttestationError);
  });

  it('createAttestors builds the configured attestors in order from config', async () => {
    const cfg = parseAgentConfig({ procRoot, attestors: ['unix'], unix: { workloadPath: true } });
    const [unix, ...rest] = createAttestors(cfg, { etcDir });
    expect(rest).toHaveLength(0);
    expect(unix!.name).toBe('unix');
    expect(values(await unix!.attest(creds(4242)))).toContain(`unix:path:${bin}`);
    const both = createAttestors(parseAgentConfig({ attestors: ['unix', 'k8s'], k8s: { kubeletUrl: 'http://127.0.0.1:1' } }));
    expect(both.map((a) => a.name)).toEqual(['unix', 'k8s']);
    for (const a of both) a.close?.();
    expect(attestorNames()).toEqual(['unix', 'k8s']);
    expect(() => createAttestors({ ...cfg, attestors: ['tpm' as 'unix'] })).toThrow(ConfigError);
  });
});
