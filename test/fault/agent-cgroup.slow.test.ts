// Agent faults on real child processes in real cgroups: the freezer stops all CPU progress (and the
// SIGSTOP fallback too), a CFS quota throttles, a squeeze under the usage OOM-kills (the kernel's
// oom_kill counter moves) and the limit comes back, and kill sends the signal and waits for the death.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Cgroup, detectCgroupHost, removeIfEmpty, removeTree, spawnInCgroup } from '../../src/cgroup/index.js';
import { agentKill, agentPause, cpuThrottle, memorySqueeze } from '../../src/fault/fault-agent.js';
import { parseFaults, type Fault, type FaultTarget } from '../../src/fault/index.js';
import { statCpuSeconds } from '../../src/util/procfs-stat.js';
import { skipNote } from '../support/skip-note.js';

const { host, reason } = detectCgroupHost();
if (!host) skipNote('every test of agent-cgroup.slow.test.ts', reason);
const MiB = 2 ** 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const root = `attestorm-faulttest-${process.pid}`;
const children: ChildProcess[] = [];
const cgroups: Cgroup[] = [];

afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const cg of cgroups.splice(0)) await cg.remove();
});
afterAll(() => {
  if (!host) return;
  for (const base of [host.memoryBase, host.cpuBase, host.freezerBase]) if (base) removeIfEmpty(join(base, root));
});

function cgroup(name: string, opts: { cpu?: boolean; freezer?: boolean } = {}): Cgroup {
  const cg = Cgroup.create(host!, `${root}/${name}`, opts);
  cgroups.push(cg);
  return cg;
}

/** A shell spinning on one core (CPU time is its only progress), returned once it is inside the cgroup. */
async function spinner(cg: Cgroup | null): Promise<ChildProcess> {
  const c = spawnInCgroup(cg, '/bin/sh', ['-c', 'while :; do :; done'], { stdio: 'ignore' });
  children.push(c);
  // spawnInCgroup's wrapper shell writes itself into every procs file, then execs the command.
  while (cg && readFileSync(`/proc/${c.pid}/cmdline`, 'utf8').includes('attestorm-cgroup-exec')) await sleep(10);
  return c;
}

function cpuSeconds(pid: number): number {
  return statCpuSeconds(readFileSync(`/proc/${pid}/stat`, 'utf8'))!;
}

function target(cg: Cgroup | null, child: ChildProcess): FaultTarget {
  return {
    socket: '/nonexistent',
    agentCgroup: cg,
    kubelet: null,
    agentPid: () => (child.exitCode === null && child.signalCode === null ? child.pid! : null),
    waitAgentAnswers: () => Promise.resolve(),
  };
}

function fault<F extends Fault['action']>(input: Record<string, unknown> & { action: F }): Extract<Fault, { action: F }> {
  return parseFaults([{ at: 0, ...input }])[0] as Extract<Fault, { action: F }>;
}

describe.skipIf(!host)(`agent faults in real cgroups (${reason})`, () => {
  it('agent-pause freezes the cgroup: no CPU progress while frozen, progress again after the thaw', async () => {
    const cg = cgroup('pause', { freezer: true });
    expect(cg.canFreeze()).toBe(true);
    const child = await spinner(cg);
    await sleep(200);
    const started = await agentPause(fault({ action: 'agent-pause', for: '1s' }), target(cg, child));
    expect(started.detail).toMatch(/^froze the agent's cgroup \((v1 freezer|cgroup\.freeze), 1 processes\)$/);
    expect(cg.freezerState()).toBe('FROZEN');
    const frozenAt = cpuSeconds(child.pid!);
    await sleep(500);
    expect(cpuSeconds(child.pid!)).toBe(frozenAt);
    expect(await started.end!()).toMatch(/^thawed/);
    expect(cg.freezerState()).toBe('THAWED');
    await sleep(300);
    expect(cpuSeconds(child.pid!)).toBeGreaterThan(frozenAt);
  });

  it('a frozen cgroup is still removed (remove thaws, then kills)', async () => {
    const cg = Cgroup.create(host!, `${root}/frozen-remove`, { freezer: true });
    const child = await spinner(cg);
    await cg.freeze();
    const exited = new Promise((r) => child.once('exit', r));
    await cg.remove();
    await exited;
    expect(child.signalCode).toBe('SIGKILL');
  });

  it('removeTree of the memory directory kills a process frozen in the freezer hierarchy (a run that died mid-pause)', async () => {
    const cg = cgroup('frozen-orphan', { freezer: true });
    const child = await spinner(cg);
    await cg.freeze();
    const exited = new Promise((r) => child.once('exit', r));
    // What `attestorm cleanup` does for a dead run: the memory and cpu trees, with no Cgroup object.
    await removeTree(cg.path);
    await exited;
    expect(child.signalCode).toBe('SIGKILL');
  });

  it('agent-pause without a freezer falls back to SIGSTOP and SIGCONT', async () => {
    const child = await spinner(null);
    await sleep(100);
    const started = await agentPause(fault({ action: 'agent-pause', for: '1s' }), target(null, child));
    expect(started.detail).toBe(`stopped the agent with SIGSTOP (pid ${child.pid}; no freezer cgroup)`);
    await sleep(50);
    const stoppedAt = cpuSeconds(child.pid!);
    await sleep(400);
    expect(cpuSeconds(child.pid!)).toBe(stoppedAt);
    expect(await started.end!()).toBe(`continued the agent with SIGCONT (pid ${child.pid})`);
    await sleep(300);
    expect(cpuSeconds(child.pid!)).toBeGreaterThan(stoppedAt);
  });

  const noCpu = host?.version === 'v1' && !host.cpuBase;
  if (noCpu) skipNote('cpu-throttle on a real cgroup', 'this v1 host has no cpu hierarchy');
  it.skipIf(noCpu)(`cpu-throttle sets a CFS quota the kernel enforces, then restores none${noCpu ? ' (skipped: no v1 cpu hierarchy)' : ''}`, async () => {
    const cg = cgroup('throttle', { cpu: true });
    expect(cg.canLimitCpu()).toBe(true);
    expect(cg.readCpuQuota()).toBeNull();
    const child = await spinner(cg);
    const started = await cpuThrottle(fault({ action: 'cpu-throttle', for: '1s', cores: 0.1 }), target(cg, child));
    expect(started.detail).toBe('CPU quota unlimited → 0.1 cores');
    expect(cg.readCpuQuota()).toBeCloseTo(0.1, 5);
    const statFile = join(cg.version === 'v1' ? cg.cpuPath! : cg.path, 'cpu.stat');
    const throttled = () => Number(/nr_throttled (\d+)/.exec(readFileSync(statFile, 'utf8'))![1]);
    const before = cpuSeconds(child.pid!);
    const t0 = Date.now();
    await sleep(1000);
    const used = cpuSeconds(child.pid!) - before;
    const wall = (Date.now() - t0) / 1000;
    // The kernel held it to 0.1 core per period (an upper bound it enforces, with slack for tick accounting).
    expect(used).toBeLessThan(0.1 * wall + 0.15);
    expect(throttled()).toBeGreaterThan(0);
    expect(await started.end!()).toBe('CPU quota restored to unlimited');
    expect(cg.readCpuQuota()).toBeNull();
  });

  it('memory-squeeze under the usage OOM-kills the process, the oom_kill counter moves, the limit is restored', async () => {
    const cg = cgroup('squeeze');
    cg.setMemoryLimit(256 * MiB);
    // Holds 48 MiB, then allocates 1 MiB every 20 ms up to 160 MiB: a process whose memory grows under load.
    const script = `const k=[];for(let i=0;i<48;i++)k.push(Buffer.alloc(1<<20,1));console.log('ready');setInterval(()=>{if(k.length<160)k.push(Buffer.alloc(1<<20,1))},20);`;
    const child = spawnInCgroup(cg, process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'ignore'] });
    children.push(child);
    await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
    const exited = new Promise<NodeJS.Signals | null>((r) => child.once('exit', (_c, sig) => r(sig)));
    const before = cg.readMemory();
    expect(before.limitBytes).toBe(256 * MiB);
    const started = await memorySqueeze(fault({ action: 'memory-squeeze', for: '2s', to: '16Mi' }), target(cg, child));
    expect(started.detail).toMatch(/^memory limit 256\.0 MiB → \d+\.\d MiB, usage \d+\.\d MiB/);
    // v1 refuses (EBUSY) a limit under what it cannot reclaim: the limit lands at the usage instead.
    if (cg.version === 'v1') expect(started.detail).toContain('(asked 16.0 MiB; v1 refuses');
    else expect(started.detail).not.toContain('v1 refuses');
    // The process cannot fit: the kernel OOM-kills it.
    expect(await exited).toBe('SIGKILL');
    expect(cg.readMemory().oomKills).toBeGreaterThan(before.oomKills);
    expect(cg.readMemory().limitBytes).toBeLessThan(256 * MiB);
    expect(await started.end!()).toMatch(/^memory limit restored to 256\.0 MiB; [1-9]\d* OOM kills?/);
    expect(cg.readMemory().limitBytes).toBe(256 * MiB);
  });

  it('agent-kill sends the signal and waits for the death; a down agent is not applied', async () => {
    const child = spawn('/bin/sh', ['-c', 'sleep 60'], { stdio: 'ignore' });
    children.push(child);
    const t = target(null, child);
    const started = await agentKill(fault({ action: 'agent-kill' }), t);
    expect(started.detail).toMatch(new RegExp(`^sent SIGKILL to the agent \\(pid ${child.pid}\\), gone after \\d+ ms; its supervisor restarts it$`));
    expect(started.end).toBeUndefined();
    await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r(null) : child.once('exit', r)));
    expect(child.signalCode).toBe('SIGKILL');
    await expect(agentKill(fault({ action: 'agent-kill', signal: 'SIGTERM' }), t)).rejects.toThrow(/the agent is down \(no pid\)/);
  });

  it("agent-kill goes through the supervisor's killAgent when the target has one", async () => {
    const child = spawn('/bin/sh', ['-c', 'sleep 60'], { stdio: 'ignore' });
    children.push(child);
    const asked: string[] = [];
    const t: FaultTarget = { ...target(null, child), killAgent: (sig) => void (asked.push(sig), child.kill(sig)) };
    const started = await agentKill(fault({ action: 'agent-kill', signal: 'SIGTERM' }), t);
    expect(asked).toEqual(['SIGTERM']);
    expect(started.detail).toMatch(/^sent SIGTERM to the agent \(pid \d+\), gone after \d+ ms/);
  });
});
