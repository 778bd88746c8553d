// The external target against a real process in a real memory cgroup: a kernel OOM kill of an agent
// the harness does not own is seen through the cgroup's oom_kill counter and the PID disappearing.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Cgroup, detectCgroupHost, removeIfEmpty, spawnInCgroup } from '../../src/cgroup/index.js';
import type { DeathVerdict } from '../../src/targets/index.js';
import { createTarget } from '../../src/targets/index.js';
import { skipNote } from '../support/skip-note.js';

const { host, reason } = detectCgroupHost();
if (!host) skipNote('every test of external.slow.test.ts', reason);
const dir = mkdtempSync(join(tmpdir(), 'attestorm-ext-'));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let cg: Cgroup | null = null;
afterAll(async () => {
  await cg?.remove().catch(() => {});
  if (host) removeIfEmpty(join(host.memoryBase, 'attestorm'));
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!host)(`external target (${reason})`, () => {
  it('detects a kernel OOM kill of an agent it does not own, from the cgroup counter and the PID', async () => {
    cg = Cgroup.create(host!, `attestorm/test-ext-${process.pid}`);
    cg.setMemoryLimit(64 * 2 ** 20);
    const socket = join(dir, 'ext.sock');
    // A stand-in agent: serves a socket, then grows until the kernel kills it.
    const child = spawnInCgroup(
      cg,
      process.execPath,
      [
        '-e',
        `require('net').createServer().listen(${JSON.stringify(socket)}); setTimeout(() => { const a = []; setInterval(() => a.push(Buffer.alloc(8 << 20, 1)), 20); }, 1500);`,
      ],
      { stdio: 'ignore' },
    );
    const exited = new Promise((r) => child.once('exit', r));
    while (!existsSync(socket)) await sleep(50);
    const deaths: DeathVerdict[] = [];
    const events: string[] = [];
    const target = createTarget({ kind: 'external', socket, cgroup: cg.path } as never, {
      variant: 'ext',
      rep: 1,
      dir,
      tmpDir: dir,
      runId: 'test',
      host: null,
      sandbox: null as never,
      signal: new AbortController().signal,
      event: (type, detail) => events.push(`${type}: ${detail ?? ''}`),
      onDeath: (v) => deaths.push(v),
    });
    await target.start();
    expect(target.pid()).toBe(child.pid);
    expect(target.limitBytes).toBe(64 * 2 ** 20);
    await exited;
    const deadline = Date.now() + 5000;
    while (target.oomKills < 1 && Date.now() < deadline) await sleep(50);
    await target.stop();
    expect(target.oomKills).toBe(1);
    expect(deaths[0]).toMatchObject({ cause: 'oom-kill' });
    expect(events.some((e) => e.startsWith('oom-kill: kernel OOM kill of the external agent'))).toBe(true);
    expect(events.some((e) => e.startsWith('agent-exit: external agent pid'))).toBe(true);
    expect(target.pid()).toBeNull();
    // A cgroup it does not own is never reset, so no kernel peak is claimed for the run.
    expect(target.peakBytes()).toBeNull();
  });
});
