// grpc.health.v1.Health on the agent's Workload API socket, called with a real grpc-js health
// client (the standard health proto from the grpc-health-check package) and, where SPIRE binaries
// are given, with SPIRE's own `spire-agent healthcheck`: the answers SPIRE's agent gives, also
// while the limiter rejects every workload sharing the agent's key and while a storm of callers is
// parked in attestation.
import { execFile, spawn } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { afterAll, describe, expect, it } from 'vitest';
import type { AgentConfigInput, StartAgentOptions } from '../../src/agent/index.js';
import { healthClientConstructor, PROTO_PATH, type HealthCheckResponse } from '../../src/proto/index.js';
import { startFakeKubelet, type FakeKubelet } from './fake-kubelet.js';
import { fakeProcRoot, podCgroup, scrape, spawnCaller, startTestAgent, tempDir, type ChildCaller, type TestAgent } from './harness.js';

const X509_OPENS = fileURLToPath(new URL('./fixtures/x509-opens.mjs', import.meta.url));
const RATE_LIMITED = 'rate limit exceeded for /SpiffeWorkloadAPI/FetchX509SVID';
const STOPPED_CLOCK = () => 0;

function check(socketPath: string, service = '', md = new grpc.Metadata()): Promise<HealthCheckResponse> {
  const Health = healthClientConstructor();
  const client = new Health(`unix:${socketPath}`, grpc.credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 });
  return new Promise<HealthCheckResponse>((resolve, reject) => {
    client.Check({ service }, md, { deadline: Date.now() + 10_000 }, (err, res) => {
      client.close();
      if (err) reject(err);
      else resolve(res!);
    });
  });
}

/** n FetchX509SVID stream opens from a separate process (a workload whose pid is not the agent's). */
function opensFromAnotherProcess(socketPath: string, n: number): Promise<Array<{ code: number; details: string }>> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [X509_OPENS, socketPath, PROTO_PATH, String(n)], { timeout: 20_000 }, (err, stdout) =>
      err ? reject(err as Error) : resolve(JSON.parse(stdout) as Array<{ code: number; details: string }>),
    );
  });
}

async function withAgent(
  input: Partial<AgentConfigInput>,
  opts: Pick<StartAgentOptions, 'limiterNow' | 'agentPid'>,
  fn: (t: TestAgent, logs: string[]) => Promise<void>,
): Promise<void> {
  const logs: string[] = [];
  const t = await startTestAgent(input, logs, opts);
  try {
    await fn(t, logs);
  } finally {
    await t.stop();
  }
}

// The agent as it runs for real: its own pid is the agent's (the test's clients are then "the
// agent" too, so workloads are played by child processes where that matters).
const AS_DEPLOYED = { agentPid: process.pid };

describe('grpc.health.v1.Health on the Workload API socket', () => {
  it('Check is SERVING when the agent can issue its own identity, without a security header', () =>
    withAgent({}, AS_DEPLOYED, async (t) => {
      // No workload.spiffe.io header: SPIRE checks it on /SpiffeWorkloadAPI/ methods only.
      expect(await check(t.socketPath)).toEqual({ status: 'SERVING' });
    }));

  it('Check is SERVING when no entry matches the agent itself (PermissionDenied is healthy, as in SPIRE)', async () => {
    const dir = tempDir();
    try {
      const entries = join(dir, 'entries.yaml');
      writeFileSync(entries, 'entries:\n  - spiffeId: spiffe://example.org/nobody\n    selectors: ["unix:uid:4294967294"]\n');
      await withAgent({ entries }, AS_DEPLOYED, async (t) => {
        expect(await opensFromAnotherProcess(t.socketPath, 1)).toEqual([{ code: grpc.status.PERMISSION_DENIED, details: 'no identity issued' }]);
        expect(await check(t.socketPath)).toEqual({ status: 'SERVING' });
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('Check is NOT_SERVING when the agent cannot attest itself, and says why in its log', async () => {
    const dir = tempDir();
    try {
      // A procfs view without the agent's pid: the agent cannot attest its own call.
      await withAgent({ procRoot: fakeProcRoot(dir, {}) }, AS_DEPLOYED, async (t, logs) => {
        expect(await check(t.socketPath)).toEqual({ status: 'NOT_SERVING' });
        expect(
          logs.some((l) => /health check failed: unable to fetch X\.509 context from Workload API: UNAVAILABLE: workload attestation failed/.test(l)),
          logs.join('\n'),
        ).toBe(true);
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a named service is InvalidArgument; Watch and List are not served', () =>
    withAgent({}, AS_DEPLOYED, async (t) => {
      await expect(check(t.socketPath, 'SpiffeWorkloadAPI')).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: 'per-service health is not supported',
      });
      const raw = new grpc.Client(`unix:${t.socketPath}`, grpc.credentials.createInsecure());
      try {
        for (const path of ['/grpc.health.v1.Health/Watch', '/grpc.health.v1.Health/List']) {
          const code = await new Promise<number>((resolve) => {
            const s = raw.makeServerStreamRequest(
              path,
              () => Buffer.alloc(0),
              (b: Buffer) => b,
              {},
              new grpc.Metadata(),
            );
            s.on('error', (e: grpc.ServiceError) => resolve(e.code));
            s.on('data', () => {});
          });
          expect(code, path).toBe(grpc.status.UNIMPLEMENTED);
        }
      } finally {
        raw.close();
      }
    }));

  it('the health check and its own fetch are not counted as Workload API calls; the fetch is attested', () =>
    withAgent({}, AS_DEPLOYED, async (t) => {
      expect(await check(t.socketPath)).toEqual({ status: 'SERVING' });
      expect(await scrape(t.agent.metricsUrl!, 'workload_api_calls_total{method="FetchX509SVID",code="OK"}')).toBe(0);
      expect(await scrape(t.agent.metricsUrl!, 'workload_api_attestation_duration_seconds_count')).toBe(1);
      await opensFromAnotherProcess(t.socketPath, 1);
      expect(await scrape(t.agent.metricsUrl!, 'workload_api_calls_total{method="FetchX509SVID",code="OK"}')).toBe(1);
    }));

  // The workloads and the agent run as the same uid and have the same selectors, so they share
  // a bucket under either placement; the clock is stopped, so no bucket refills during the test.
  for (const placement of ['pre-attestation', 'post-attestation'] as const) {
    it(`${placement}: SERVING while the limiter rejects every workload on the agent's own key`, () =>
      withAgent({ rateLimit: { placement, limits: { fetch_x509_svid: 1 } } }, { ...AS_DEPLOYED, limiterNow: STOPPED_CLOCK }, async (t) => {
        const before = await opensFromAnotherProcess(t.socketPath, 3);
        expect(before.map((o) => o.code)).toEqual([grpc.status.OK, grpc.status.UNAVAILABLE, grpc.status.UNAVAILABLE]);
        expect(before[1]!.details).toBe(RATE_LIMITED);
        expect(await check(t.socketPath)).toEqual({ status: 'SERVING' });
        expect(await opensFromAnotherProcess(t.socketPath, 1)).toEqual([{ code: grpc.status.UNAVAILABLE, details: RATE_LIMITED }]);
      }));
  }

  it('without the exemption the same limiter would make the health check NOT_SERVING (why the agent exempts itself)', () =>
    withAgent(
      { rateLimit: { placement: 'pre-attestation', limits: { fetch_x509_svid: 1 } } },
      { agentPid: null, limiterNow: STOPPED_CLOCK },
      async (t, logs) => {
        await opensFromAnotherProcess(t.socketPath, 2);
        expect(await check(t.socketPath)).toEqual({ status: 'NOT_SERVING' });
        expect(logs.some((l) => l.includes(`UNAVAILABLE: ${RATE_LIMITED}`))).toBe(true);
      },
    ));

  describe('under a storm parked in attestation', () => {
    let kubelet: FakeKubelet | undefined;
    const dir = tempDir();
    const callers: ChildCaller[] = [];
    afterAll(async () => {
      for (const c of callers) c.kill();
      await kubelet?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('is SERVING while workloads wait on a kubelet that does not answer: the agent is no pod and needs no pod list', async () => {
      kubelet = await startFakeKubelet();
      const held: ServerResponse[] = [];
      kubelet.handler = (_req, res) => void held.push(res);
      const N = 6;
      for (let i = 0; i < N; i++) callers.push(await spawnCaller(join(dir, 'agent.sock'), 'wait'));
      const cgroups: Record<number, string> = { [process.pid]: '0::/user.slice/user-0.slice/session-1.scope\n' };
      callers.forEach((c, i) => (cgroups[c.pid] = podCgroup(`00000000-0000-0000-0000-00000000000${i}`, String(i).repeat(64))));
      await withAgent(
        {
          socket: join(dir, 'agent.sock'),
          procRoot: fakeProcRoot(dir, cgroups),
          attestors: ['unix', 'k8s'],
          k8s: { kubeletUrl: kubelet.url, timeout: '30s', pollInterval: '10ms', maxPollAttempts: 2 },
        },
        AS_DEPLOYED,
        async (t) => {
          for (const c of callers) c.send();
          const inflight = () => scrape(t.agent.metricsUrl!, 'workload_api_attestations_inflight');
          // Parked: every attestation in flight and the kubelet holding the pod-list request they wait on
          // (counted in flight before that request has reached it).
          for (let i = 0; i < 500 && ((await inflight()) < N || held.length === 0); i++) await new Promise((r) => setTimeout(r, 10));
          expect(await inflight()).toBe(N);
          expect(held.length).toBeGreaterThan(0);
          expect(await check(t.socketPath)).toEqual({ status: 'SERVING' });
          // Still parked: the health answer did not wait for them, nor they for it.
          expect(await inflight()).toBe(N);
          for (const res of held) res.destroy();
        },
      );
    });
  });
});

// SPIRE's own client, where SPIRE binaries are given.
const SPIRE_BIN_DIR = process.env.SPIRE_BIN_DIR;
const spireAgent = SPIRE_BIN_DIR ? join(SPIRE_BIN_DIR, 'spire-agent') : undefined;
const spireSkip = !SPIRE_BIN_DIR
  ? "SPIRE_BIN_DIR is unset (point it at a folder with spire-agent to run SPIRE's own healthcheck against the reference agent)"
  : !existsSync(spireAgent!)
    ? `SPIRE_BIN_DIR=${SPIRE_BIN_DIR} has no spire-agent`
    : null;
if (spireSkip) console.log(`skipping spire-agent healthcheck tests: ${spireSkip}`);

function spireHealthcheck(socketPath: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(spireAgent!, ['healthcheck', '-socketPath', socketPath, '-verbose'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe.skipIf(spireSkip !== null)("SPIRE's spire-agent healthcheck against the reference agent", () => {
  it('reports the agent healthy, also while the limiter rejects workloads on its key', () =>
    withAgent({ rateLimit: { placement: 'post-attestation', limits: { fetch_x509_svid: 1 } } }, { ...AS_DEPLOYED, limiterNow: STOPPED_CLOCK }, async (t) => {
      const idle = await spireHealthcheck(t.socketPath);
      expect(idle, JSON.stringify(idle)).toMatchObject({ code: 0 });
      expect(idle.stdout).toContain('Agent is healthy.');
      const opens = await opensFromAnotherProcess(t.socketPath, 3);
      expect(opens.map((o) => o.code)).toEqual([grpc.status.OK, grpc.status.UNAVAILABLE, grpc.status.UNAVAILABLE]);
      const limited = await spireHealthcheck(t.socketPath);
      expect(limited, JSON.stringify(limited)).toMatchObject({ code: 0 });
      expect(limited.stdout).toContain('Agent is healthy.');
    }));

  it('reports NOT_SERVING as unhealthy: the agent cannot attest itself', async () => {
    const dir = tempDir();
    try {
      await withAgent({ procRoot: fakeProcRoot(dir, {}) }, AS_DEPLOYED, async (t) => {
        const r = await spireHealthcheck(t.socketPath);
        expect(r.code).toBe(1);
        expect(r.stderr).toContain('Agent is unhealthy: agent returned status "NOT_SERVING"');
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
