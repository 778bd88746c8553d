// Bad input at every layer — bytes that are not HTTP/2, HTTP/1.1, a malformed protobuf body, a
// caller that leaves mid-attestation, a kubelet that is down, slow or talks nonsense. Each ends
// in the documented status or a closed connection, and the agent serves the next caller.
import { rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import http2 from 'node:http2';
import { connect, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentConfigInput } from '../../src/agent/index.js';
import { fakeProcRoot, podCgroup, scrape, spawnCaller, startTestAgent, tempDir, unary, type TestAgent } from './harness.js';

const ok = (t: TestAgent) => unary(t.client(), 'FetchJWTSVID', { audience: ['next'] });

function statusOf(p: Promise<unknown>) {
  return p.then(
    () => ({ code: grpc.status.OK, details: '' }),
    (e: grpc.ServiceError) => ({ code: e.code, details: e.details }),
  );
}

/** Writes raw bytes to the agent socket; resolves with what came back once the agent closes it. */
function rawExchange(socketPath: string, bytes: Buffer | string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const s = connect(socketPath);
    const got: Buffer[] = [];
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error('the agent did not close the connection within 10 s'));
    }, 10_000);
    s.on('data', (d) => got.push(d));
    s.on('error', () => {});
    s.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(got));
    });
    s.write(bytes);
  });
}

describe('malformed transport input', () => {
  let t: TestAgent;
  beforeAll(async () => {
    t = await startTestAgent();
  });
  afterAll(() => t?.stop());

  it('garbage bytes: the connection is closed and the agent keeps serving', async () => {
    const junk = Buffer.alloc(4096);
    for (let i = 0; i < junk.length; i++) junk[i] = (i * 131 + 7) & 0xff;
    await rawExchange(t.socketPath, junk);
    await expect(ok(t)).resolves.toBeTruthy();
  });

  it('a plain HTTP/1.1 request: the connection is closed and the agent keeps serving', async () => {
    await rawExchange(t.socketPath, 'POST /SpiffeWorkloadAPI/FetchJWTSVID HTTP/1.1\r\nHost: agent\r\nContent-Length: 0\r\n\r\n');
    await expect(ok(t)).resolves.toBeTruthy();
  });

  it('a gRPC frame with a malformed protobuf body ends with a non-OK status and the agent keeps serving', async () => {
    const session = http2.connect('http://localhost', { createConnection: () => connect(t.socketPath) });
    session.on('error', () => {});
    try {
      // A tag varint that never ends: protobufjs cannot decode it (it tolerates short strings, so
      // a truncated length-delimited field would not do).
      const body = Buffer.from([0xff, 0xff, 0xff]);
      const frame = Buffer.concat([Buffer.from([0, 0, 0, 0, body.length]), body]);
      const req = session.request({
        ':method': 'POST',
        ':path': '/SpiffeWorkloadAPI/FetchJWTSVID',
        'content-type': 'application/grpc',
        te: 'trailers',
        'workload.spiffe.io': 'true',
      });
      const status = await new Promise<string | undefined>((resolve, reject) => {
        let st: string | undefined;
        req.on('response', (h) => (st = (h['grpc-status'] as string | undefined) ?? st));
        req.on('trailers', (h) => (st = h['grpc-status'] as string | undefined));
        req.on('data', () => {});
        req.on('end', () => resolve(st));
        req.on('error', reject);
        req.end(frame);
      });
      expect(status).toBeDefined();
      expect(Number(status)).toBe(grpc.status.INTERNAL); // grpc-js: "Error deserializing request"
    } finally {
      session.close();
    }
    await expect(ok(t)).resolves.toBeTruthy();
  });

  it('a message above the 64 KiB receive limit is ResourceExhausted and the agent keeps serving', async () => {
    const r = await statusOf(unary(t.client(), 'FetchJWTSVID', { audience: ['x'.repeat(70 * 1024)] }));
    expect(r.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    await expect(ok(t)).resolves.toBeTruthy();
  });
});

// ---- a real local HTTP kubelet whose behaviour each test chooses ----

type KubeletMode = 'ok' | 'hold' | 'invalid-json' | 'status-500';

interface Kubelet {
  url: string;
  mode: KubeletMode;
  pods: object[];
  /** Resolves when the next request arrives. */
  nextRequest(): Promise<void>;
  /** Answers every held request with the pod list. */
  release(): void;
  close(): Promise<void>;
}

async function startKubelet(): Promise<Kubelet> {
  const held: ServerResponse[] = [];
  let arrived: (() => void)[] = [];
  const k: Kubelet = {
    url: '',
    mode: 'ok',
    pods: [],
    nextRequest: () => new Promise<void>((r) => arrived.push(r)),
    release() {
      for (const res of held.splice(0)) answer(res);
    },
    close: () =>
      new Promise<void>((r) => {
        for (const res of held.splice(0)) res.destroy();
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
  const answer = (res: ServerResponse) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'PodList', items: k.pods }));
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const waiting = arrived;
    arrived = [];
    for (const w of waiting) w();
    if (req.url !== '/pods') return void res.writeHead(404).end();
    if (k.mode === 'hold') return void held.push(res);
    if (k.mode === 'invalid-json') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"items": [ {');
    if (k.mode === 'status-500') return void res.writeHead(500).end('boom');
    answer(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  k.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return k;
}

function pod(name: string, uid: string, containerID: string) {
  return {
    metadata: { name, namespace: 'storm', uid, labels: { app: name } },
    spec: { serviceAccountName: `${name}-sa`, nodeName: 'node-1' },
    status: { containerStatuses: [{ name: 'main', image: 'busybox:1', imageID: 'sha256:1', containerID: `containerd://${containerID}` }] },
  };
}

const POD_A = '11111111-2222-3333-4444-555555555555';
const POD_B = '66666666-7777-8888-9999-000000000000';
const CID_A = 'a'.repeat(64);
const CID_B = 'b'.repeat(64);

describe('k8s attestation against a misbehaving kubelet', () => {
  let kubelet: Kubelet;
  let dir: string;
  beforeAll(async () => {
    kubelet = await startKubelet();
    dir = tempDir();
  });
  afterAll(async () => {
    await kubelet?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** An agent whose procfs view puts this test process in pod A and `child` (if any) outside any pod. */
  async function agentFor(sub: string, childPid: number | null, extra: Partial<AgentConfigInput> = {}): Promise<TestAgent> {
    const pids: Record<number, string> = { [process.pid]: podCgroup(POD_A, CID_A) };
    if (childPid !== null) pids[childPid] = '0::/user.slice/user-0.slice/session-1.scope\n';
    const procRoot = fakeProcRoot(join(dir, sub), pids);
    return startTestAgent({
      socket: join(dir, sub, 'agent.sock'),
      procRoot,
      attestors: ['unix', 'k8s'],
      k8s: { kubeletUrl: kubelet.url, timeout: '400ms', pollInterval: '50ms', maxPollAttempts: 2 },
      ...extra,
    });
  }

  for (const [mode, what] of [
    ['down', 'down'],
    ['hold', 'slower than the timeout'],
    ['invalid-json', 'answering invalid JSON'],
    ['status-500', 'answering 500'],
  ] as const) {
    it(`kubelet ${what}: Unavailable "workload attestation failed", then the next caller is served`, async () => {
      const child = await spawnCaller(join(dir, mode, 'agent.sock'), 'wait');
      const t = await agentFor(mode, child.pid, mode === 'down' ? { k8s: { kubeletUrl: 'http://127.0.0.1:1', timeout: '400ms', pollInterval: '50ms', maxPollAttempts: 2 } } : {});
      kubelet.mode = mode === 'down' ? 'ok' : mode;
      try {
        const r = await statusOf(unary(t.client(), 'FetchJWTSVID', { audience: ['a'] }));
        expect(r).toEqual({ code: grpc.status.UNAVAILABLE, details: 'workload attestation failed' });
        // A caller outside any pod needs no kubelet: it is served.
        const next = await child.go();
        expect(next.code).toBe(grpc.status.OK);
        if (mode !== 'down') {
          expect(await scrape(t.agent.metricsUrl!, 'workload_api_kubelet_fetches_total{outcome="error"}')).toBeGreaterThan(0);
        }
      } finally {
        kubelet.release();
        child.kill();
        await t.stop();
      }
    });
  }

  it('a healthy kubelet: the pod caller gets its k8s-derived identity', async () => {
    kubelet.mode = 'ok';
    kubelet.pods = [pod('api', POD_A, CID_A)];
    const t = await agentFor('healthy', null);
    try {
      const res = await unary<object, { svids: { spiffe_id: string }[] }>(t.client(), 'FetchJWTSVID', { audience: ['a'] });
      expect(res.svids.map((s) => s.spiffe_id)).toEqual(['spiffe://example.org/ns/storm/sa/api-sa']);
      expect(await scrape(t.agent.metricsUrl!, 'workload_api_kubelet_fetches_total{outcome="ok"}')).toBeGreaterThan(0);
    } finally {
      await t.stop();
    }
  });

  for (const cancelAbandoned of [false, true]) {
    it(`a caller that disconnects mid-attestation (cancelAbandoned ${cancelAbandoned}): ${
      cancelAbandoned ? 'the attestation is dropped at once' : 'the attestation runs on, as in real agents'
    }; the agent keeps serving`, async () => {
      const sub = `abandon-${cancelAbandoned}`;
      const child = await spawnCaller(join(dir, sub, 'agent.sock'), 'wait');
      const procRoot = fakeProcRoot(join(dir, sub), {
        [process.pid]: podCgroup(POD_A, CID_A),
        [child.pid]: podCgroup(POD_B, CID_B),
      });
      kubelet.mode = 'hold';
      kubelet.pods = [pod('api', POD_A, CID_A), pod('worker', POD_B, CID_B)];
      const t = await startTestAgent({
        socket: join(dir, sub, 'agent.sock'),
        procRoot,
        attestors: ['unix', 'k8s'],
        k8s: { kubeletUrl: kubelet.url, timeout: '30s', pollInterval: '50ms', maxPollAttempts: 2 },
        model: { cancelAbandoned, attestationWorkingSet: '1Mi' },
      });
      const metric = (s: string) => scrape(t.agent.metricsUrl!, s);
      try {
        const asked = kubelet.nextRequest();
        child.send();
        await asked; // the child's attestation is now waiting on the kubelet
        expect(await metric('workload_api_attestations_inflight')).toBe(1);
        child.kill();
        await child.exited;
        // Wait until the agent has seen the disconnect (the connection gauge drops to 0).
        for (let i = 0; i < 200 && (await metric('workload_api_open_connections')) > 0; i++) await new Promise((r) => setTimeout(r, 10));
        expect(await metric('workload_api_open_connections')).toBe(0);
        expect(await metric('workload_api_attestations_inflight')).toBe(cancelAbandoned ? 0 : 1);
        kubelet.mode = 'ok';
        kubelet.release();
        for (let i = 0; i < 200 && (await metric('workload_api_attestations_inflight')) > 0; i++) await new Promise((r) => setTimeout(r, 10));
        expect(await metric('workload_api_attestations_inflight')).toBe(0);
        for (let i = 0; i < 200 && (await metric('workload_api_calls_total{method="FetchJWTSVID",code="CANCELLED"}')) < 1; i++) {
          await new Promise((r) => setTimeout(r, 10));
        }
        expect(await metric('workload_api_calls_total{method="FetchJWTSVID",code="CANCELLED"}')).toBe(1);
        expect(await metric('workload_api_attestation_duration_seconds_count')).toBe(1);
        // The next caller is served.
        const res = await unary<object, { svids: { spiffe_id: string }[] }>(t.client(), 'FetchJWTSVID', { audience: ['a'] });
        expect(res.svids.map((s) => s.spiffe_id)).toEqual(['spiffe://example.org/ns/storm/sa/api-sa']);
      } finally {
        child.kill();
        kubelet.mode = 'ok';
        kubelet.release();
        await t.stop();
      }
    });
  }
});
