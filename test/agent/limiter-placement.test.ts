// The limiter at each placement, seen from outside: a burst of real calls, the rejections' status
// and message, and — the point of the project — whether a rejected call paid for attestation
// (read from the agent's own attestation histogram on /metrics).
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import type { AgentConfigInput } from '../../src/agent/index.js';
import { fakeProcRoot, firstMessage, podCgroup, scrape, spawnCaller, startTestAgent, tempDir, unary, type TestAgent } from './harness.js';
import { rmSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { startFakeKubelet } from './fake-kubelet.js';

interface Outcome {
  code: grpc.status;
  details: string;
}

async function burst(
  t: TestAgent,
  n: number,
  method: 'FetchJWTSVID' | 'ValidateJWTSVID' = 'FetchJWTSVID',
  req: object = { audience: ['a'] },
): Promise<Outcome[]> {
  const c = t.client();
  return Promise.all(
    Array.from({ length: n }, () =>
      unary(c, method, req).then(
        () => ({ code: grpc.status.OK, details: '' }),
        (e: grpc.ServiceError) => ({ code: e.code, details: e.details }),
      ),
    ),
  );
}

const attestations = (t: TestAgent) => scrape(t.agent.metricsUrl!, 'workload_api_attestation_duration_seconds_count');
const limitedCount = (t: TestAgent, method: string, keyType: string) =>
  scrape(t.agent.metricsUrl!, `workload_api_rate_limit_exceeded_total{method="${method}",key_type="${keyType}"}`);

async function withAgent(input: Partial<AgentConfigInput>, fn: (t: TestAgent) => Promise<void>): Promise<void> {
  const t = await startTestAgent(input);
  try {
    await fn(t);
  } finally {
    await t.stop();
  }
}

const LIMIT = 5;
const CALLS = 20;
const REJECTED = 'rate limit exceeded for /SpiffeWorkloadAPI/FetchJWTSVID';

describe('limiter placement', () => {
  it('pre-attestation: a burst beyond the limit is rejected with Unavailable, and rejected calls are never attested', () =>
    withAgent({ rateLimit: { placement: 'pre-attestation', limits: { fetch_jwt_svid: LIMIT } } }, async (t) => {
      const out = await burst(t, CALLS);
      const ok = out.filter((o) => o.code === grpc.status.OK).length;
      const rejected = out.filter((o) => o.code !== grpc.status.OK);
      expect(ok).toBeGreaterThanOrEqual(LIMIT);
      expect(rejected.length).toBeGreaterThan(0);
      for (const r of rejected) expect(r).toEqual({ code: grpc.status.UNAVAILABLE, details: REJECTED });
      // Only the admitted calls were attested.
      expect(await attestations(t)).toBe(ok);
      // Not a Kubernetes node: pod-uid falls back to the OS uid.
      expect(await limitedCount(t, 'FetchJWTSVID', 'os_uid')).toBe(rejected.length);
    }));

  it('post-attestation: the same burst is rejected the same way, but every rejected call was attested first', () =>
    withAgent({ rateLimit: { placement: 'post-attestation', limits: { fetch_jwt_svid: LIMIT } } }, async (t) => {
      const out = await burst(t, CALLS);
      const ok = out.filter((o) => o.code === grpc.status.OK).length;
      const rejected = out.filter((o) => o.code !== grpc.status.OK);
      expect(ok).toBeGreaterThanOrEqual(LIMIT);
      expect(rejected.length).toBeGreaterThan(0);
      for (const r of rejected) expect(r).toEqual({ code: grpc.status.UNAVAILABLE, details: REJECTED });
      expect(await attestations(t)).toBe(CALLS);
      expect(await limitedCount(t, 'FetchJWTSVID', 'selector_set')).toBe(rejected.length);
    }));

  it('disabled: nothing is rejected and every call is attested', () =>
    withAgent({ rateLimit: { placement: 'disabled', limits: { fetch_jwt_svid: 1 } } }, async (t) => {
      const out = await burst(t, CALLS);
      expect(out.every((o) => o.code === grpc.status.OK)).toBe(true);
      expect(await attestations(t)).toBe(CALLS);
    }));

  it('rejectStatus resource-exhausted answers ResourceExhausted with the same message', () =>
    withAgent({ rateLimit: { placement: 'pre-attestation', rejectStatus: 'resource-exhausted', limits: { fetch_jwt_svid: 1 } } }, async (t) => {
      const out = await burst(t, 10);
      const rejected = out.filter((o) => o.code !== grpc.status.OK);
      expect(rejected.length).toBeGreaterThan(0);
      for (const r of rejected) expect(r).toEqual({ code: grpc.status.RESOURCE_EXHAUSTED, details: REJECTED });
    }));

  it('streams count opens: a third FetchJWTBundles open within the second is rejected', () =>
    withAgent({ rateLimit: { placement: 'pre-attestation', limits: { fetch_jwt_bundles: 2 } } }, async (t) => {
      const c = t.client();
      const opens = await Promise.all(
        Array.from({ length: 6 }, () =>
          firstMessage(c, 'FetchJWTBundles').then(
            () => ({ code: 0, details: '' }),
            (e: grpc.ServiceError) => ({ code: e.code, details: e.details }),
          ),
        ),
      );
      const rejected = opens.filter((o) => o.code !== 0);
      expect(opens.length - rejected.length).toBeGreaterThanOrEqual(2);
      expect(rejected.length).toBeGreaterThan(0);
      for (const r of rejected) {
        expect(r).toEqual({ code: grpc.status.UNAVAILABLE, details: 'rate limit exceeded for /SpiffeWorkloadAPI/FetchJWTBundles' });
      }
      // Other methods have their own buckets (limit 0 = unlimited).
      expect((await burst(t, 5)).every((o) => o.code === grpc.status.OK)).toBe(true);
    }));

  it('ValidateJWTSVID is exempt by default and limited when validate_jwt_svid is set', async () => {
    await withAgent({ rateLimit: { placement: 'pre-attestation', limits: { fetch_jwt_svid: 1 } } }, async (t) => {
      const out = await burst(t, 10, 'ValidateJWTSVID', { audience: 'a', svid: 'x.y.z' });
      // Every call reaches validation (InvalidArgument for a junk token), none is rate limited.
      expect(out.every((o) => o.code === grpc.status.INVALID_ARGUMENT)).toBe(true);
    });
    await withAgent({ rateLimit: { placement: 'post-attestation', limits: { validate_jwt_svid: 1 } } }, async (t) => {
      const out = await burst(t, 10, 'ValidateJWTSVID', { audience: 'a', svid: 'x.y.z' });
      const limited = out.filter((o) => o.code === grpc.status.UNAVAILABLE);
      expect(limited.length).toBeGreaterThan(0);
      expect(limited[0]!.details).toBe('rate limit exceeded for /SpiffeWorkloadAPI/ValidateJWTSVID');
    });
  });

  it('post-attestation with key spiffe-id labels rejections spiffe_id', () =>
    withAgent({ rateLimit: { placement: 'post-attestation', key: 'spiffe-id', limits: { fetch_jwt_svid: 2 } } }, async (t) => {
      const out = await burst(t, 10);
      const rejected = out.filter((o) => o.code !== grpc.status.OK).length;
      expect(rejected).toBeGreaterThan(0);
      expect(await limitedCount(t, 'FetchJWTSVID', 'spiffe_id')).toBe(rejected);
    }));

  it('pre-attestation pod-uid: callers in different pods have separate buckets', async () => {
    // Two real processes placed in two pods through the agent's procfs view; the test process
    // exhausts pod A's bucket, then a child in pod B is still admitted. The limiter's clock is
    // stopped, so no bucket refills during the test: a bucket shared by both pods would reject B
    // however slow the machine, and pod A's counts are exact.
    const dir = tempDir();
    const socket = `${dir}/agent.sock`;
    const child = await spawnCaller(socket, 'wait');
    const podA = '11111111-2222-3333-4444-555555555555';
    const podB = '66666666-7777-8888-9999-000000000000';
    const cid = (c: string) => c.repeat(64);
    const procRoot = fakeProcRoot(dir, { [process.pid]: podCgroup(podA, cid('a')), [child.pid]: podCgroup(podB, cid('b')) });
    const t = await startTestAgent(
      {
        socket,
        procRoot,
        attestors: ['unix'],
        rateLimit: { placement: 'pre-attestation', key: 'pod-uid', kubernetesNode: 'true', limits: { fetch_jwt_svid: 2 } },
      },
      [],
      { limiterNow: () => 1_000 },
    );
    try {
      const out = await burst(t, 10);
      expect(out.filter((o) => o.code === grpc.status.OK)).toHaveLength(2);
      expect(out.filter((o) => o.code === grpc.status.UNAVAILABLE)).toHaveLength(8);
      expect(await limitedCount(t, 'FetchJWTSVID', 'pod_uid')).toBe(8);
      const r = await child.go();
      expect(r.code).toBe(grpc.status.OK);
      // Pod A's bucket is still empty: nothing refilled while B was served.
      expect((await burst(t, 1))[0]!.code).toBe(grpc.status.UNAVAILABLE);
      expect(await limitedCount(t, 'FetchJWTSVID', 'pod_uid')).toBe(9);
    } finally {
      child.kill();
      await t.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('what each placement holds in flight during a storm', () => {
  // The mechanism behind the memory table: with the kubelet slow (here: holding its answer), every
  // admitted call sits in attestation. Pre-attestation admits only the bucket's worth; post-
  // attestation lets the whole burst in, so all of it holds attestation memory at once.
  const POD = '11111111-2222-3333-4444-555555555555';
  const CID = 'd'.repeat(64);
  const BURST = 30;

  for (const placement of ['pre-attestation', 'post-attestation'] as const) {
    it(`${placement}: attestations in flight while the kubelet is slow`, async () => {
      const kubelet = await startFakeKubelet();
      kubelet.pods = [
        {
          metadata: { name: 'storm', namespace: 'storm', uid: POD },
          spec: { serviceAccountName: 'storm' },
          status: { containerStatuses: [{ name: 'main', image: 'busybox', containerID: `containerd://${CID}` }] },
        },
      ];
      const held: ServerResponse[] = [];
      kubelet.handler = (_req, res) => void held.push(res);
      const dir = tempDir();
      const t = await startTestAgent({
        socket: join(dir, 'agent.sock'),
        procRoot: fakeProcRoot(dir, { [process.pid]: podCgroup(POD, CID) }),
        attestors: ['unix', 'k8s'],
        k8s: { kubeletUrl: kubelet.url, timeout: '30s', pollInterval: '10ms', maxPollAttempts: 2 },
        rateLimit: { placement, kubernetesNode: 'true', limits: { fetch_jwt_svid: LIMIT } },
        model: { attestationWorkingSet: '256Ki' },
      });
      const metric = (s: string) => scrape(t.agent.metricsUrl!, s);
      try {
        let settled = false;
        const calls = burst(t, BURST);
        void calls.then(() => (settled = true));
        let inflight = 0;
        for (let i = 0; i < 500; i++) {
          inflight = await metric('workload_api_attestations_inflight');
          const limited = await metric(
            `workload_api_rate_limit_exceeded_total{method="FetchJWTSVID",key_type="${placement === 'pre-attestation' ? 'pod_uid' : 'selector_set'}"}`,
          );
          if (placement === 'pre-attestation' ? inflight + limited === BURST && inflight > 0 : inflight === BURST) break;
          await new Promise((r) => setTimeout(r, 10));
        }
        // Admitted calls are all parked on the kubelet, so the burst as a whole has not settled.
        expect(settled).toBe(false);
        if (placement === 'pre-attestation') {
          expect(inflight).toBeGreaterThanOrEqual(LIMIT);
          expect(inflight).toBeLessThan(BURST / 2);
        } else {
          expect(inflight).toBe(BURST);
        }
        kubelet.handler = undefined;
        for (const res of held) res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ items: kubelet.pods }));
        const out = await calls;
        const ok = out.filter((o) => o.code === grpc.status.OK).length;
        expect(out.filter((o) => o.code === grpc.status.UNAVAILABLE).length).toBe(BURST - ok);
        expect(await metric('workload_api_attestation_duration_seconds_count')).toBe(placement === 'pre-attestation' ? ok : BURST);
      } finally {
        kubelet.handler = undefined;
        for (const res of held) if (!res.writableEnded) res.destroy();
        await t.stop();
        await kubelet.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
