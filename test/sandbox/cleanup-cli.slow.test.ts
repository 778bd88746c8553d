// `attestorm cleanup` on leftovers made by a really killed owner: its cgroups, its temp dir and a
// socket it listened on are listed by --dry-run, then removed; a live socket and a live run stay.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Cgroup, detectCgroupHost, removeTree } from '../../src/cgroup/index.js';
import { createSandbox, newRunId, runTempDir, tempRoot, type Sandbox } from '../../src/sandbox/index.js';
import { skipNote } from '../support/skip-note.js';

const ROOT = join(import.meta.dirname, '..', '..');
const { host, reason } = detectCgroupHost();
if (!host) skipNote("cleanup of a dead run's cgroups", reason);
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

function cli(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'cli', 'main.ts'), 'cleanup', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('attestorm cleanup', () => {
  it('lists with --dry-run, then removes, what a SIGKILLed run left; leaves live runs and sockets alone', async () => {
    mkdirSync(tempRoot(), { recursive: true });
    // A run whose owner has exited: its run id names a PID that no longer runs.
    const deadPid = spawnSync('true').pid;
    const runId = newRunId('clitest', deadPid);
    const loose = join(tempRoot(), `${runId}-loose.sock`);
    // A process of that run listens on a socket in the run dir and one directly under the temp
    // root, then dies by SIGKILL, so both socket files stay behind with nobody listening.
    const owner = spawn(
      process.execPath,
      [
        '-e',
        `
      const net = require('net'); const fs = require('fs');
      const [dir, loose] = process.argv.slice(1);
      fs.mkdirSync(dir, { recursive: true });
      let n = 0;
      for (const p of [dir + '/agent.sock', loose]) net.createServer().listen(p, () => { if (++n === 2) console.log('up'); });
      setInterval(() => {}, 1 << 30);`,
        runTempDir(runId),
        loose,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    cleanups.push(
      () => rmSync(runTempDir(runId), { recursive: true, force: true }),
      () => rmSync(loose, { force: true }),
    );
    await new Promise<void>((r) => owner.stdout!.once('data', () => r()));
    // Its cgroups, in every hierarchy.
    const cg = host ? Cgroup.create(host, `attestorm/${runId}/kubepods/besteffort/pod-x`, { cpu: true }) : null;
    // On failure: remove what the CLI did not (and the shared attestorm/ dir once it is empty).
    if (host) {
      cleanups.push(async () => {
        for (const base of [host.memoryBase, host.cpuBase]) {
          if (!base) continue;
          await removeTree(join(base, 'attestorm', runId));
          try {
            rmdirSync(join(base, 'attestorm'));
          } catch {
            // Another run is using it.
          }
        }
      });
    }
    owner.kill('SIGKILL');
    await new Promise((r) => owner.once('exit', r));

    const live: Server = createServer();
    const liveSock = join(tempRoot(), `live-${process.pid}.sock`);
    await new Promise<void>((r) => live.listen(liveSock, () => r()));
    cleanups.push(() => new Promise((r) => live.close(r)));
    const sb: Sandbox = await createSandbox({ runId: newRunId('clilive'), pods: 1, useCgroups: host ? 'always' : 'never' });
    cleanups.push(() => sb.close());

    const expected = [runTempDir(runId), loose];
    if (host) expected.push(join(host.memoryBase, 'attestorm', runId), ...(host.cpuBase ? [join(host.cpuBase, 'attestorm', runId)] : []));
    // A --cpu-budget quota cgroup whose owner is gone, with a run's cgroup below it, and a live one (ours).
    const budgets = host?.cpuBase
      ? { dead: join(host.cpuBase, 'attestorm', `budget-${deadPid}`), live: join(host.cpuBase, 'attestorm', `budget-${process.pid}`) }
      : null;
    if (budgets) {
      mkdirSync(join(budgets.dead, 'attestorm', runId), { recursive: true });
      mkdirSync(budgets.live, { recursive: true });
      cleanups.push(async () => {
        await removeTree(budgets.dead);
        await removeTree(budgets.live);
      });
      expected.push(budgets.dead);
    }

    const dry = cli('--dry-run');
    expect(dry.status).toBe(0);
    for (const p of expected) expect(dry.stdout).toContain(`would remove ${p}\n`);
    expect(dry.stdout).not.toContain(sb.runId);
    expect(dry.stdout).not.toContain(liveSock);
    for (const p of expected) expect(existsSync(p)).toBe(true);

    const real = cli();
    expect(real.status).toBe(0);
    for (const p of expected) expect(real.stdout).toContain(`removed ${p}\n`);
    for (const p of expected) expect(existsSync(p)).toBe(false);
    if (cg) expect(existsSync(cg.path)).toBe(false);
    expect(existsSync(liveSock)).toBe(true);
    expect(existsSync(runTempDir(sb.runId))).toBe(true);
    if (budgets) expect(existsSync(budgets.live)).toBe(true);

    const again = cli();
    expect(again.status).toBe(0);
    expect(again.stdout).not.toMatch(/clitest/);
  });
});
