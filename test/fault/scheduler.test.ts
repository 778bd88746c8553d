// The fault scheduler on real parts (the kubelet emulator over HTTP, a Unix socket server, a stopped
// child process): start and end events after their offsets, the fault really in force in between,
// abort undoing everything at once, faults that cannot apply, and recovery from the runner's hooks.
// The pod-churn and burst hooks are recording fakes of the runner's storm, named as such.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FaultScheduler, parseFaults, type FaultEvent, type FaultTarget } from '../../src/fault/index.js';
import { startKubeletEmulator, type KubeletEmulator } from '../../src/sandbox/index.js';

const dir = mkdtempSync(join(tmpdir(), 'attestorm-sched-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** GET /pods on a fresh connection: the status, or the connection error's code. */
function kubeletStatus(k: KubeletEmulator): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request(`${k.url}/pods`, { agent: false, timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode!);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    req.end();
  });
}

async function socketServer(name: string) {
  const path = join(dir, name);
  const conns: Socket[] = [];
  const srv = createServer((s) => {
    conns.push(s);
    s.on('error', () => {});
    s.resume();
  });
  await new Promise<void>((r) => srv.listen(path, r));
  return { path, conns, close: () => srv.close() };
}

/** The runner's storm hooks, faked: they record what the scheduler asked for. */
function fakeStorm() {
  const calls: string[] = [];
  return {
    calls,
    churnPods: async (n: number) => void calls.push(`churn ${n}`),
    startBurst: async (n: number) => {
      calls.push(`burst ${n}`);
      return { stop: async () => void calls.push(`burst ${n} stopped`) };
    },
  };
}

function procState(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
}

describe('fault scheduler', () => {
  it('starts each fault at its offset and ends it at at+for; the fault is in force in between', async () => {
    const kubelet = await startKubeletEmulator({ podSource: () => [], fillerPods: 2 });
    const sock = await socketServer('a.sock');
    const storm = fakeStorm();
    const events: FaultEvent[] = [];
    const seen: Array<number | string> = [];
    const target: FaultTarget = {
      socket: sock.path,
      agentPid: () => null,
      agentCgroup: null,
      kubelet: kubelet.faults,
      waitAgentAnswers: async () => {},
      ...storm,
    };
    const faults = parseFaults([
      { at: '100ms', for: '1s', action: 'kubelet-errors', rate: 1 },
      { at: '150ms', for: '900ms', action: 'slow-clients', count: 8 },
      { at: '50ms', action: 'pod-churn', count: 3 },
      { at: 0, for: '800ms', action: 'burst', workers: 20 },
    ]);
    const loadStart = Date.now();
    const sched = new FaultScheduler({
      faults,
      target,
      loadStart,
      onEvent: (e) => {
        events.push(e);
        if (e.action === 'kubelet-errors') void kubeletStatus(kubelet).then((s) => seen.push(s));
      },
    });
    sched.start();
    const held = async () => {
      for (let i = 0; i < 40 && sock.conns.filter((c) => !c.destroyed).length < 8; i++) await sleep(10);
      return sock.conns.filter((c) => !c.destroyed).length;
    };
    await sleep(300);
    expect(await held()).toBe(8);
    await sleep(1000);
    const records = await sched.stop();
    await sleep(50);

    expect(seen).toEqual([500, 200]);
    expect(sock.conns.every((c) => c.destroyed)).toBe(true);
    expect(storm.calls).toEqual(['burst 20', 'churn 3', 'burst 20 stopped']);
    for (const e of events) {
      const f = faults[e.index]!;
      expect(e.t).toBeGreaterThanOrEqual(e.type === 'fault-start' ? f.at : f.at + (f.for ?? 0));
    }
    expect(events.map((e) => `${e.type} ${e.index}`)).toEqual([
      'fault-start 3',
      'fault-start 2',
      'fault-end 2',
      'fault-start 0',
      'fault-start 1',
      'fault-end 3',
      'fault-end 1',
      'fault-end 0',
    ]);
    expect(events.find((e) => e.index === 1 && e.type === 'fault-start')!.detail).toBe(
      "faults[1] slow-clients: 8 slow connections held open on the agent's socket (partial HTTP/2 preface)",
    );
    expect(records.map((r) => [r.action, r.atMs, r.forMs])).toEqual([
      ['kubelet-errors', 100, 1000],
      ['slow-clients', 150, 900],
      ['pod-churn', 50, null],
      ['burst', 0, 800],
    ]);
    for (const r of records) {
      expect(r.startedAtMs).toBeGreaterThanOrEqual(r.atMs);
      expect(r.endedAtMs).toBeGreaterThanOrEqual(r.atMs + (r.forMs ?? 0));
      expect(r.error).toBeUndefined();
      // The hook resolved at once: the agent "answered" right after each end.
      expect(r.recovery.agentReadyMs).not.toBeNull();
      expect(r.recovery.bystanderOkMs).toBeNull();
    }
    sock.close();
    await kubelet.close();
  });

  it('abort ends every fault in force at once and undoes it; later faults never start', async () => {
    const kubelet = await startKubeletEmulator({ podSource: () => [], fillerPods: 2 });
    const sock = await socketServer('b.sock');
    const storm = fakeStorm();
    const child = spawn('/bin/sh', ['-c', 'sleep 30'], { stdio: 'ignore' });
    const target: FaultTarget = {
      socket: sock.path,
      agentPid: () => child.pid!,
      agentCgroup: null,
      kubelet: kubelet.faults,
      // An agent that never answers: the probes must give up at stop.
      waitAgentAnswers: (signal) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
      ...storm,
    };
    const faults = parseFaults([
      { at: 0, for: '1m', action: 'kubelet-latency', value: '5s' },
      { at: 0, for: '1m', action: 'kubelet-errors', rate: 0.5 },
      { at: 0, for: '1m', action: 'kubelet-down' },
      { at: 0, for: '1m', action: 'slow-clients', count: 5 },
      { at: 0, for: '1m', action: 'burst', workers: 4 },
      { at: 0, for: '1m', action: 'agent-pause' },
      { at: '40s', action: 'agent-kill' },
    ]);
    const abort = new AbortController();
    const events: FaultEvent[] = [];
    const sched = new FaultScheduler({ faults, target, loadStart: Date.now(), onEvent: (e) => events.push(e), signal: abort.signal });
    sched.start();
    await sleep(200);
    expect(await kubeletStatus(kubelet)).toBe('ECONNREFUSED');
    expect(procState(child.pid!)).toBe('T');
    abort.abort();
    const records = await sched.stop();

    expect(kubelet.faults.faultState()).toEqual({ extraLatencyMs: 0, errorRate: null, down: false, stalled: false });
    expect(await kubeletStatus(kubelet)).toBe(200);
    await sleep(50);
    expect(sock.conns).toHaveLength(5);
    expect(sock.conns.every((c) => c.destroyed)).toBe(true);
    expect(storm.calls).toEqual(['burst 4', 'burst 4 stopped']);
    expect(procState(child.pid!)).not.toBe('T');
    expect(events.filter((e) => e.type === 'fault-end')).toHaveLength(6);
    expect(events.find((e) => e.type === 'fault-end' && e.action === 'agent-pause')!.detail).toBe(
      `faults[5] agent-pause: continued the agent with SIGCONT (pid ${child.pid}) (ended early: the load phase stopped)`,
    );
    expect(records[6]).toMatchObject({ action: 'agent-kill', startedAtMs: null, endedAtMs: null });
    expect(records.slice(0, 6).every((r) => r.endedAtMs! < 60_000 && r.recovery.agentReadyMs === null)).toBe(true);
    child.kill('SIGKILL');
    sock.close();
    await kubelet.close();
  });

  it('many faults wait on one signal without a MaxListeners warning', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    const target: FaultTarget = { socket: join(dir, 'none.sock'), agentPid: () => null, agentCgroup: null, kubelet: null, waitAgentAnswers: async () => {} };
    const faults = parseFaults(Array.from({ length: 15 }, (_, i) => ({ at: `${10 + i}s`, for: '1s', action: 'agent-pause' })));
    const sched = new FaultScheduler({ faults, target, loadStart: Date.now() });
    sched.start();
    await sched.stop();
    await sleep(20);
    process.off('warning', onWarning);
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });

  it('a fault the target cannot take at that moment is an event and a record, not a crash', async () => {
    const events: FaultEvent[] = [];
    const target: FaultTarget = { socket: join(dir, 'none.sock'), agentPid: () => null, agentCgroup: null, kubelet: null, waitAgentAnswers: async () => {} };
    const faults = parseFaults([
      { at: 0, action: 'agent-kill' },
      { at: 0, for: '1s', action: 'kubelet-stall' },
    ]);
    const sched = new FaultScheduler({ faults, target, loadStart: Date.now(), onEvent: (e) => events.push(e) });
    sched.start();
    await sleep(50);
    const records = await sched.stop();
    expect(events.map((e) => e.detail)).toEqual([
      'faults[0] agent-kill: not applied: the agent is down (no pid), e.g. restarting after an earlier fault',
      'faults[0] agent-kill: not applied',
      'faults[1] kubelet-stall: not applied: the target has no kubelet emulator',
      'faults[1] kubelet-stall: not applied',
    ]);
    expect(records[0]!.error).toBe('the agent is down (no pid), e.g. restarting after an earlier fault');
    expect(records[0]!.detail).toBe('not applied: the agent is down (no pid), e.g. restarting after an earlier fault');
    expect(events[0]!.t).toBe(records[0]!.startedAtMs);
    expect(() => sched.start()).toThrow(/twice/);
  });

  it('recovery: the agent probe from the end of the fault, bystanders from the seconds the runner feeds', async () => {
    // The load started 1.2 s ago, so the fault (at 1.2s, 100 ms long) starts now.
    const loadStart = Date.now() - 1200;
    let probeCalledAt = 0;
    let probeAnsweredAt = 0;
    const target: FaultTarget = {
      socket: join(dir, 'none.sock'),
      agentPid: () => null,
      agentCgroup: null,
      kubelet: null,
      waitAgentAnswers: async () => {
        probeCalledAt = Date.now();
        await sleep(150);
        probeAnsweredAt = Date.now();
      },
      ...fakeStorm(),
    };
    const sched = new FaultScheduler({ faults: parseFaults([{ at: '1200ms', for: '100ms', action: 'burst', workers: 1 }]), target, loadStart });
    sched.start();
    sched.bystanderSecond({ t: 1000, calls: 10, ok: 10 });
    await sleep(400);
    sched.bystanderSecond({ t: 2000, calls: 10, ok: 0 });
    sched.bystanderSecond({ t: 3000, calls: 10, ok: 4 });
    sched.bystanderSecond({ t: 4000, calls: 10, ok: 10 });
    const [r] = await sched.stop();
    expect(probeCalledAt - loadStart).toBeGreaterThanOrEqual(r!.endedAtMs!);
    // The agent counts as ready once the probe answered: at least the probe's own wait after the end
    // (measured on the same clock; a timer may fire a millisecond early by Date.now's reckoning).
    expect(probeAnsweredAt - probeCalledAt).toBeGreaterThan(100);
    expect(r!.recovery.agentReadyMs).toBeGreaterThanOrEqual(probeAnsweredAt - probeCalledAt);
    // The first second after the end with a success is t=3000; lost: t=2000 (10) and t=3000 (6).
    expect(r!.recovery.bystanderOkMs).toBe(3000 - r!.endedAtMs!);
    expect(r!.recovery.callsLost).toBe(16);
  });

  it('bystanders served through the end recover in 0 ms, mixed seconds count with the agent answering, never served again is null', async () => {
    const target: FaultTarget = {
      socket: join(dir, 'none.sock'),
      agentPid: () => null,
      agentCgroup: null,
      kubelet: null,
      waitAgentAnswers: async () => {},
      ...fakeStorm(),
    };
    const run = async (seconds: Array<[number, number, number]>) => {
      const sched = new FaultScheduler({ faults: parseFaults([{ at: '1200ms', action: 'pod-churn', count: 1 }]), target, loadStart: Date.now() - 1200 });
      sched.start();
      for (const [t, calls, ok] of seconds) sched.bystanderSecond({ t, calls, ok });
      await sleep(50);
      return (await sched.stop())[0]!.recovery;
    };
    expect(
      await run([
        [1000, 5, 5],
        [2000, 5, 5],
        [3000, 5, 5],
      ]),
    ).toMatchObject({ bystanderOkMs: 0, callsLost: 0 });
    // Successes in the second holding the end, with the agent answering in it: that second's end.
    const mixed = await run([
      [1000, 5, 5],
      [2000, 5, 2],
      [3000, 5, 5],
    ]);
    expect(mixed.bystanderOkMs).toBeGreaterThan(0);
    expect(mixed.bystanderOkMs).toBeLessThanOrEqual(800);
    expect(mixed.callsLost).toBe(3);
    expect(
      await run([
        [1000, 5, 5],
        [2000, 5, 0],
        [3000, 5, 0],
      ]),
    ).toMatchObject({ bystanderOkMs: null, callsLost: 10 });
  });
});
