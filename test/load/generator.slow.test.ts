// The generator against real servers: the reference agent (attestation, limiter) and a bare grpc-js
// server behind a relay that reads SO_PEERCRED, so the tests see which processes really connect,
// from which cgroup, over how many connections. Every run is bounded and must leave nothing behind.
import { readFileSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createPeerCredReader, parseAgentConfig, parseCgroup, startAgent } from '../../src/agent/index.js';
import { runLoad, summarizeHistogram, WORKER_NICE, type LoadSummary } from '../../src/load/index.js';
import { createSandbox, newRunId, type Sandbox } from '../../src/sandbox/index.js';
import type { LoadSample } from '../../src/scenario/index.js';
import { startBareServer } from './support/bare-server.js';
import { waitNoLoadProcesses } from './support/leftovers.js';
import { skipNote } from '../support/skip-note.js';

const cleanups: Array<() => Promise<void> | void> = [];
/** Directories holding this test's sockets: generator processes name them in their argv. */
const socketDirs: string[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
  expect(await waitNoLoadProcesses(socketDirs.splice(0)), 'generator processes left behind').toEqual([]);
});

async function bareServer(opts: Parameters<typeof startBareServer>[0]) {
  const server = await startBareServer(opts);
  socketDirs.push(server.dir);
  cleanups.push(() => server.close());
  return server;
}

function seriesCalls(s: LoadSummary): number {
  return s.series.reduce((n, x) => n + x.ok + x.rateLimited + x.deadlineExceeded + x.error, 0);
}

async function sandbox(pods: number, extra: Record<string, unknown> = {}): Promise<Sandbox> {
  const sb = await createSandbox({ runId: newRunId('loadtest'), pods, ...extra });
  cleanups.push(() => sb.close());
  return sb;
}

describe('load generator against a counting server', () => {
  it("each worker is its own process in its pod's cgroup, and per-call opens a connection per call", async () => {
    const peerCred = createPeerCredReader();
    const callers = new Map<number, string | null>();
    const server = await bareServer({
      counting: true,
      onAccept: (socket) => {
        const { pid } = peerCred(socket);
        if (callers.has(pid)) return;
        // Read while the caller is certainly alive: it is waiting on this connection.
        let podUid: string | null;
        try {
          podUid = parseCgroup(readFileSync(`/proc/${pid}/cgroup`, 'utf8')).podUID;
        } catch {
          podUid = null;
        }
        callers.set(pid, podUid);
      },
    });
    cleanups.push(() => server.close());
    const sb = await sandbox(2);
    const podUids = new Set<string>();
    sb.on('pod-start', (p) => podUids.add(p.uid));
    const seconds: LoadSample[] = [];
    const summary = await runLoad(
      { socket: server.socket, pods: 2, workersPerPod: 3, durationMs: 3000, connection: 'per-call' },
      { sandbox: sb, onSecond: (s) => seconds.push(s) },
    );

    expect(summary.totals.calls).toBeGreaterThan(6);
    expect(summary.totals.byCode, JSON.stringify(summary.totals)).toEqual({ OK: summary.totals.calls });
    // What the server answered is what the generator counted; the series adds up to the totals.
    expect(server.calls.OK).toBe(summary.totals.calls);
    expect(seriesCalls(summary)).toBe(summary.totals.calls);
    expect(seconds).toEqual(summary.series);
    expect(summary.series.map((s) => s.t)).toEqual([0, 1000, 2000]);
    expect(summarizeHistogram(summary.histograms.ok!).count).toBe(summary.totals.ok);
    expect(summary.latency.ok!.count).toBe(summary.totals.ok);
    // per-call: one accepted connection per call, all closed afterwards.
    expect(server.accepted).toBe(summary.totals.calls);
    expect(server.open).toBe(0);
    // Six workers, six distinct PIDs, three in each pod's cgroup.
    expect(callers.size).toBe(6);
    expect(summary.workers).toBe(6);
    expect(Object.keys(summary.pods).sort()).toEqual([...podUids].sort());
    if (sb.fidelity === 'cgroup-pods') {
      const perPod = new Map<string, number>();
      for (const uid of callers.values()) perPod.set(uid!, (perPod.get(uid!) ?? 0) + 1);
      expect([...perPod.keys()].sort()).toEqual([...podUids].sort());
      expect([...perPod.values()]).toEqual([3, 3]);
    } else {
      skipNote("workers placed in their pods' cgroups", `sandbox fidelity ${sb.fidelity}`);
    }
    expect(summary.workerMemoryBytes?.samples).toBe(6);
    expect(summary.workerMemoryBytes!.median).toBeGreaterThan(1 << 20);
  });

  it('workers in a pod with a CPU cgroup of its own yield to the pod process (nice 19); plain local pods keep its priority', async () => {
    const peerCred = createPeerCredReader();
    /** nice values of each calling worker and of its parent, the pod process, read while they run. */
    const seen = new Map<number, { nice: number; parentNice: number }>();
    const niceOf = (pid: number) => {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // After the command: state(3) ppid(4) … priority(18) nice(19), counted from field 3.
      return { ppid: Number(fields[1]), nice: Number(fields[16]) };
    };
    const server = await bareServer({
      counting: true,
      onAccept: (socket) => {
        const { pid } = peerCred(socket);
        if (seen.has(pid)) return;
        try {
          const w = niceOf(pid);
          seen.set(pid, { nice: w.nice, parentNice: niceOf(w.ppid).nice });
        } catch {
          // The worker ended between accept and read: another call of it is read instead.
        }
      },
    });
    const sb = await sandbox(1);
    const cpuGroups: boolean[] = [];
    sb.on('pod-start', (p) => cpuGroups.push(p.cpuGroup === true));
    await runLoad({ socket: server.socket, pods: 1, workersPerPod: 3, durationMs: 1500, connection: 'per-call' }, { sandbox: sb });
    if (cpuGroups.every(Boolean) && cpuGroups.length === 1) {
      expect([...seen.values()]).toHaveLength(3);
      for (const w of seen.values()) expect(w).toEqual({ nice: WORKER_NICE, parentNice: getPriority() });
    } else {
      skipNote("workers reniced inside their pod's CPU cgroup", `sandbox fidelity ${sb.fidelity}, pods without a cpu cgroup`);
    }

    // Without a sandbox the pods are plain processes sharing the runner's CPU group: a nice value
    // would shift CPU between the workers and the agent, so none is set.
    seen.clear();
    await runLoad({ socket: server.socket, pods: 1, workersPerPod: 2, durationMs: 1000, connection: 'per-call' });
    expect([...seen.values()]).toHaveLength(2);
    for (const w of seen.values()) expect(w).toEqual({ nice: getPriority(), parentNice: getPriority() });
  });

  it("either client can drive the storm: each worker runs its client's bundle, one connection per call", async () => {
    const peerCred = createPeerCredReader();
    for (const client of ['grpc-js', 'h2'] as const) {
      const bundles = new Set<string>();
      const server = await bareServer({
        counting: true,
        onAccept: (socket) => {
          const { pid } = peerCred(socket);
          try {
            bundles.add(/load-worker-worker-main-[a-z0-9-]+?(?=-[0-9a-f]{12}\.[cm]js)/.exec(readFileSync(`/proc/${pid}/cmdline`, 'utf8'))?.[0] ?? 'unknown');
          } catch {
            bundles.add('gone');
          }
        },
      });
      const summary = await runLoad({ socket: server.socket, pods: 1, workersPerPod: 2, durationMs: 1500, connection: 'per-call', client });
      expect(summary.totals.ok, client).toBeGreaterThan(2);
      expect(summary.totals.byCode).toEqual({ OK: summary.totals.calls });
      expect(server.accepted).toBe(summary.totals.calls);
      expect(server.open).toBe(0);
      expect([...bundles]).toEqual([`load-worker-worker-main-${client}`]);
    }
  });

  it('per-worker reuses one connection per worker; per-retry reconnects only after errors', async () => {
    const server = await bareServer({ counting: true });
    const summary = await runLoad({ socket: server.socket, pods: 1, workersPerPod: 3, durationMs: 2000, connection: 'per-worker' });
    expect(summary.totals.ok).toBeGreaterThan(30);
    expect(server.accepted).toBe(3);
    expect(server.open).toBe(0);

    const rejecting = await bareServer({ counting: true, reject: { code: 14, details: 'rate limit exceeded for /SpiffeWorkloadAPI/FetchJWTSVID' } });
    const limited = await runLoad({ socket: rejecting.socket, pods: 1, workersPerPod: 2, durationMs: 1500, connection: 'per-retry' });
    expect(limited.totals.rateLimited).toBe(limited.totals.calls);
    expect(limited.totals.byCode).toEqual({ UNAVAILABLE: limited.totals.calls });
    expect(rejecting.accepted).toBe(limited.totals.calls);
  });

  it('open loop at a rate, backoff, deadlines and maxCalls all bound the calls', async () => {
    const slow = await bareServer({ counting: true, delayMs: 300 });
    const paced = await runLoad({ socket: slow.socket, pods: 1, workersPerPod: 2, durationMs: 2000, rate: 10, connection: 'per-worker', deadlineMs: 100 });
    // Every call hits the 100 ms deadline; at 10/s per worker for 2 s that is at most ~40 calls.
    expect(paced.totals.deadlineExceeded).toBe(paced.totals.calls);
    expect(paced.totals.calls).toBeGreaterThan(4);
    expect(paced.totals.calls).toBeLessThanOrEqual(44);
    expect(paced.latency.deadlineExceeded!.p50Ms).toBeGreaterThanOrEqual(100);

    const backoff = await runLoad({
      socket: slow.socket,
      pods: 1,
      workersPerPod: 2,
      durationMs: 2000,
      deadlineMs: 50,
      retry: 'backoff',
      connection: 'per-worker',
    });
    // Without backoff a 50 ms deadline allows ~40 calls per worker in 2 s; full-jitter backoff far fewer.
    expect(backoff.totals.deadlineExceeded).toBe(backoff.totals.calls);
    expect(backoff.totals.calls).toBeLessThan(40);

    const fast = await bareServer({ counting: true });
    const bounded = await runLoad({ socket: fast.socket, pods: 1, workersPerPod: 3, durationMs: 20_000, maxCalls: 30, connection: 'per-worker' });
    expect(bounded.totals.calls).toBeGreaterThanOrEqual(30);
    expect(bounded.totals.calls).toBeLessThanOrEqual(30);
    expect(fast.calls.OK).toBe(bounded.totals.calls);
    expect(bounded.durationMs).toBeLessThan(20_000);
  });

  it('beforeGo is awaited after every pod forked its workers and before any call: the agent made ready for them', async () => {
    const server = await bareServer({});
    const order: string[] = [];
    const summary = await runLoad(
      { socket: server.socket, pods: 2, workersPerPod: 2, durationMs: 1000, connection: 'per-call' },
      {
        beforeGo: async () => {
          order.push(`beforeGo with ${Object.values(server.calls).reduce((a, b) => a + b, 0)} calls served`);
          await new Promise((resolve) => setTimeout(resolve, 300));
        },
        onGo: () => order.push('go'),
      },
    );
    expect(order).toEqual(['beforeGo with 0 calls served', 'go']);
    expect(summary.totals.ok).toBeGreaterThan(0);
  });

  it('an aborted run stops promptly and returns what it collected', async () => {
    const server = await bareServer({ counting: true });
    const sb = await sandbox(2);
    const controller = new AbortController();
    let firstSecond = 0;
    const t = Date.now();
    const summary = await runLoad(
      { socket: server.socket, pods: 2, workersPerPod: 2, durationMs: 60_000 },
      {
        sandbox: sb,
        signal: controller.signal,
        onSecond: () => {
          if (++firstSecond === 2) controller.abort();
        },
      },
    );
    expect(summary.aborted).toBe(true);
    expect(Date.now() - t).toBeLessThan(45_000);
    expect(summary.totals.calls).toBeGreaterThan(0);
    expect(server.calls.OK).toBe(summary.totals.calls);
    expect(seriesCalls(summary)).toBe(summary.totals.calls);
    expect(sb.pods()).toEqual([]);
  });

  it('under pod churn, replacement pods join and ended pods keep their data', async () => {
    const server = await bareServer({ counting: true });
    // Lifetimes long enough for a pod to start its workers on a busy two-core machine.
    const sb = await sandbox(1, { podLifetimeMs: 4000 });
    const summary = await runLoad({ socket: server.socket, pods: 1, workersPerPod: 2, durationMs: 10_000 }, { sandbox: sb });
    const pods = Object.values(summary.pods);
    expect(pods.length).toBeGreaterThanOrEqual(2);
    expect(pods.filter((p) => p.ok > 0).length).toBeGreaterThanOrEqual(2);
    expect(summary.workers).toBe(pods.length * 2);
    expect(server.calls.OK).toBe(summary.totals.calls);
    expect(summary.series.map((s) => s.t)).toEqual(Array.from({ length: 10 }, (_, i) => i * 1000));
  });
});

describe('load generator against the reference agent', () => {
  it('attested calls succeed, the agent counts what the generator counts, and its limiter shows as rate-limited', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'attestorm-loadagent-'));
    socketDirs.push(dir);
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const sb = await sandbox(2);
    const socket = join(dir, 'agent.sock');
    const agent = await startAgent(
      parseAgentConfig({
        socket,
        attestors: ['unix', 'k8s'],
        k8s: { kubeletUrl: sb.kubeletUrl, pollInterval: '100ms' },
        rateLimit: { placement: 'pre-attestation', limits: { fetch_jwt_svid: 5 } },
      }),
      { log: () => {}, graceMs: 1000 },
    );
    cleanups.unshift(() => agent.close());
    const summary = await runLoad({ socket, pods: 2, workersPerPod: 2, durationMs: 3000, connection: 'per-call' }, { sandbox: sb });
    expect(summary.totals.ok).toBeGreaterThan(0);
    expect(summary.totals.rateLimited).toBeGreaterThan(0);
    // Each pod's key allows 5/s (burst 5): over ~3 s a pod gets at most ~5 + 5·3 through.
    for (const p of Object.values(summary.pods)) expect(p.ok).toBeLessThanOrEqual(25);
    const metrics = await agent.metrics.registry.getSingleMetricAsString('workload_api_calls_total');
    const agentOk = Number(/method="FetchJWTSVID",code="OK"} (\d+)/.exec(metrics)?.[1] ?? 0);
    expect(agentOk).toBe(summary.totals.ok);
  });

  it('drives every Workload API method of a mix: streams read one message, ValidateJWTSVID uses a fetched token', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'attestorm-loadagent-'));
    socketDirs.push(dir);
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const socket = join(dir, 'agent.sock');
    const agent = await startAgent(parseAgentConfig({ socket, attestors: ['unix'] }), { log: () => {}, graceMs: 1000 });
    cleanups.unshift(() => agent.close());
    const methods = { FetchJWTSVID: 1, FetchX509SVID: 1, FetchJWTBundles: 1, FetchX509Bundles: 1, ValidateJWTSVID: 1 };
    // Open loop, 200 calls/s a worker: a closed loop cancels streams on its one connection so fast
    // that the agent's HTTP/2 server (node's) ends it with INTERNAL_ERROR after ~1000 resets, its
    // rapid-reset protection, and the calls in flight come back UNAVAILABLE (docs/scenarios.md, the load).
    const summary = await runLoad({ socket, pods: 1, workersPerPod: 2, durationMs: 2000, connection: 'per-worker', methods, rate: 200 });
    expect(summary.totals.byCode).toEqual({ OK: summary.totals.calls });
    const metrics = await agent.metrics.registry.getSingleMetricAsString('workload_api_calls_total');
    const perMethod = Object.fromEntries(Object.keys(methods).map((m) => [m, Number(new RegExp(`method="${m}",code="OK"} (\\d+)`).exec(metrics)?.[1] ?? 0)]));
    for (const m of Object.keys(methods)) expect(perMethod[m], `${m} calls seen by the agent`).toBeGreaterThan(0);
    expect(Object.values(perMethod).reduce((a, b) => a + b, 0)).toBe(summary.totals.calls);
  });
});
