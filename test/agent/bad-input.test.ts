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
import { fakeProcRoot, header, podCgroup, scrape, spawnCaller, startTestAgent, tempDir, unary, type TestAgent } from './harness.js';

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
      // A tag varint that never ends, sent over a bare http2 session (no grpc-js client at all).
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
      expect(Number(status)).toBe(grpc.status.INTERNAL); // "grpc: error unmarshalling request: ..."
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

// ---- strict protobuf decoding of every request, with hand-built bytes ----

type Outcome = { code: number; details: string; message?: Buffer };

/** Raw bytes in, raw bytes out: identity serializers, so the client sends exactly `bytes`. */
const same = (b: Buffer) => b;

function rawUnaryCall(c: grpc.Client, path: string, bytes: Buffer, md: grpc.Metadata = header()): Promise<Outcome> {
  return new Promise((resolve) => {
    c.makeUnaryRequest(path, same, same, bytes, md, {}, (err: grpc.ServiceError | null, res?: Buffer) =>
      resolve(err ? { code: err.code, details: err.details } : { code: grpc.status.OK, details: '', message: res }),
    );
  });
}

/** A server stream's first message (then cancelled) or its status when it ends without one. */
function rawStreamCall(c: grpc.Client, path: string, bytes: Buffer, md: grpc.Metadata = header()): Promise<Outcome> {
  return new Promise((resolve) => {
    const call = c.makeServerStreamRequest(path, same, same, bytes, md, {});
    call.once('data', (m: Buffer) => {
      resolve({ code: grpc.status.OK, details: '', message: m });
      call.cancel();
    });
    call.on('error', (e: grpc.ServiceError) => resolve({ code: e.code, details: e.details }));
    call.on('status', (s: grpc.StatusObject) => resolve({ code: s.code, details: s.details }));
  });
}

const hex = (h: string) => Buffer.from(h.replace(/ /g, ''), 'hex');
const UNMARSHAL = 'grpc: error unmarshalling request: ';

// The three byte strings of the issue, on field 1 of each request.
const TRUNCATED = hex('0a 05 61 62'); // field 1, length 5, two bytes present
const HUGE_LENGTH = hex('0a ff ff ff ff 0f'); // field 1, length 2^32-1, nothing behind it
const BAD_UTF8 = hex('0a 02 c3 28'); // field 1, two bytes that are not UTF-8

describe('strict decoding of every Workload API request', () => {
  let t: TestAgent;
  let raw: grpc.Client;
  const attestations = () => scrape(t.agent.metricsUrl!, 'workload_api_attestation_duration_seconds_count');
  beforeAll(async () => {
    t = await startTestAgent();
    raw = new grpc.Client(`unix:${t.socketPath}`, grpc.credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 });
  });
  afterAll(async () => {
    raw?.close();
    await t?.stop();
  });

  /** A token for ValidateJWTSVID's good call. */
  async function token(audience: string): Promise<string> {
    const res = await unary<object, { svids: { svid: string }[] }>(t.client(), 'FetchJWTSVID', { audience: [audience] });
    return res.svids[0]!.svid;
  }

  /** Encodes a length-delimited field by hand (field numbers < 16). */
  const field = (n: number, text: string) => {
    const v = Buffer.from(text);
    const len: number[] = [];
    for (let l = v.length; ; l >>>= 7) {
      if (l < 0x80) {
        len.push(l);
        break;
      }
      len.push((l & 0x7f) | 0x80);
    }
    return Buffer.concat([Buffer.from([(n << 3) | 2, ...len]), v]);
  };

  interface MethodCase {
    name: string;
    kind: 'unary' | 'stream';
    /** Bytes of a request the agent serves. */
    good: () => Promise<Buffer>;
    /** Field number → name of the request's string fields (empty for the empty requests). */
    fields: Record<number, string>;
  }
  const methods: MethodCase[] = [
    { name: 'FetchJWTSVID', kind: 'unary', good: async () => field(1, 'next'), fields: { 1: 'audience', 2: 'spiffe_id' } },
    {
      name: 'ValidateJWTSVID',
      kind: 'unary',
      good: async () => Buffer.concat([field(1, 'v'), field(2, await token('v'))]),
      fields: { 1: 'audience', 2: 'svid' },
    },
    { name: 'FetchX509SVID', kind: 'stream', good: async () => Buffer.alloc(0), fields: {} },
    { name: 'FetchX509Bundles', kind: 'stream', good: async () => Buffer.alloc(0), fields: {} },
    { name: 'FetchJWTBundles', kind: 'stream', good: async () => Buffer.alloc(0), fields: {} },
  ];

  const call = (m: MethodCase, bytes: Buffer, md?: grpc.Metadata) =>
    (m.kind === 'unary' ? rawUnaryCall : rawStreamCall)(raw, `/SpiffeWorkloadAPI/${m.name}`, bytes, md);

  async function expectRefused(m: MethodCase, bytes: Buffer, problem: string | RegExp): Promise<void> {
    const before = await attestations();
    const r = await call(m, bytes);
    expect(r.code, `${m.name} ${bytes.toString('hex')}: ${r.details}`).toBe(grpc.status.INTERNAL);
    expect(r.details.startsWith(UNMARSHAL), r.details).toBe(true);
    if (typeof problem === 'string') expect(r.details).toBe(UNMARSHAL + problem);
    else expect(r.details).toMatch(problem);
    // Refused before the pipeline: no attestation ran.
    expect(await attestations()).toBe(before);
    // And the next good call on the same connection is served.
    const next = await call(m, await m.good());
    expect(next.code, next.details).toBe(grpc.status.OK);
  }

  for (const m of methods) {
    const f1 = m.fields[1] ? `field 1 (${m.fields[1]})` : 'field 1';
    describe(m.name, () => {
      it('serves the good request', async () => {
        const r = await call(m, await m.good());
        expect(r.code, r.details).toBe(grpc.status.OK);
      });

      it('refuses a length-delimited field 1 whose 5 bytes run past the end (0a 05 61 62)', async () => {
        await expectRefused(m, TRUNCATED, `${f1} length 5 runs past the end of the 4-byte message`);
      });

      it('refuses a length of 2^32-1 with nothing behind it (0a ff ff ff ff 0f)', async () => {
        await expectRefused(m, HUGE_LENGTH, `${f1} length 4294967295 runs past the end of the 6-byte message`);
      });

      it('refuses a tag or varint that runs past the end (ff ff ff)', async () => {
        await expectRefused(m, hex('ff ff ff'), 'varint at byte 0 runs past the end of the 3-byte message');
      });

      if (m.fields[1]) {
        it(`refuses invalid UTF-8 in ${m.fields[1]} (0a 02 c3 28) and in ${m.fields[2]} (12 02 c3 28)`, async () => {
          await expectRefused(m, BAD_UTF8, `field 1 (${m.fields[1]}) is not valid UTF-8`);
          await expectRefused(m, hex('12 02 c3 28'), `field 2 (${m.fields[2]}) is not valid UTF-8`);
        });

        it('refuses a known field with the wrong wire type (08 01: field 1 as a varint; 15 ...: field 2 as fixed32)', async () => {
          await expectRefused(m, hex('08 01'), `field 1 (${m.fields[1]}) has wire type 0 (varint), expected 2 (length-delimited)`);
          await expectRefused(m, hex('15 01 02 03 04'), `field 2 (${m.fields[2]}) has wire type 5 (fixed32), expected 2 (length-delimited)`);
        });
      } else {
        // Field 1 is unknown to an empty request: its bytes are skipped unread, as proto3 (and grpc-go) do.
        it('serves 0a 02 c3 28: an unknown field 1 is skipped without reading its bytes as text', async () => {
          const r = await call(m, BAD_UTF8);
          expect(r.code, r.details).toBe(grpc.status.OK);
        });
      }

      it('refuses wire types 6 and 7, a stray end-group and field number 0', async () => {
        await expectRefused(m, hex('0e'), 'field 1 has invalid wire type 6');
        await expectRefused(m, hex('0f'), 'field 1 has invalid wire type 7');
        await expectRefused(m, hex('0c'), 'field 1: end-group without a start-group');
        await expectRefused(m, hex('02 00'), 'field number 0 is not allowed');
      });

      it('refuses an unknown group that never ends and an unknown fixed64 cut short', async () => {
        await expectRefused(m, hex('5b 58 01'), 'field 11: group runs past the end of the 3-byte message');
        await expectRefused(m, hex('59 01 02'), 'field 11 (fixed64) runs past the end of the 3-byte message');
      });

      it('skips unknown varint, fixed64, length-delimited, group and fixed32 fields and serves the call', async () => {
        const unknown = hex(
          [
            '58 96 01', // field 11, varint 150
            '61 01 02 03 04 05 06 07 08', // field 12, fixed64
            '6a 03 c3 28 00', // field 13, bytes that are not UTF-8 (unknown fields are not text)
            '73 78 01 7a 01 61 74', // field 14, group holding field 15 varint and field 15 bytes, then end
            '7d 01 02 03 04', // field 15, fixed32
          ].join(''),
        );
        const good = await m.good();
        const r = await call(m, Buffer.concat([unknown, good, unknown]));
        expect(r.code, r.details).toBe(grpc.status.OK);
      });

      it('decodes before the security header is checked (as grpc-go does for unary calls)', async () => {
        const r = await call(m, TRUNCATED, new grpc.Metadata());
        expect(r.code, r.details).toBe(grpc.status.INTERNAL);
      });
    });
  }

  it('FetchJWTSVID: a refused call is counted with code INTERNAL', async () => {
    const metric = 'workload_api_calls_total{method="FetchJWTSVID",code="INTERNAL"}';
    const before = await scrape(t.agent.metricsUrl!, metric);
    await rawUnaryCall(raw, '/SpiffeWorkloadAPI/FetchJWTSVID', TRUNCATED);
    expect(await scrape(t.agent.metricsUrl!, metric)).toBe(before + 1);
  });

  it('FetchJWTSVID: repeated audiences all count, the last spiffe_id wins', async () => {
    const sid = 'spiffe://example.org/nope';
    const bytes = Buffer.concat([field(1, 'a'), field(2, 'spiffe://example.org/x'), field(1, 'b'), field(2, sid)]);
    const r = await rawUnaryCall(raw, '/SpiffeWorkloadAPI/FetchJWTSVID', bytes);
    // The last spiffe_id names no entry of this caller: PermissionDenied proves it was the one used.
    expect(r).toEqual({ code: grpc.status.PERMISSION_DENIED, details: 'no identity issued' });
    const res = await unary<object, { svids: { svid: string }[] }>(t.client(), 'FetchJWTSVID', { audience: ['a', 'b'] });
    const claims = JSON.parse(Buffer.from(res.svids[0]!.svid.split('.')[1]!, 'base64url').toString()) as { aud: string[] };
    expect(claims.aud).toEqual(['a', 'b']);
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
  const answer = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'PodList', items: k.pods }));
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
      const t = await agentFor(
        mode,
        child.pid,
        mode === 'down' ? { k8s: { kubeletUrl: 'http://127.0.0.1:1', timeout: '400ms', pollInterval: '50ms', maxPollAttempts: 2 } } : {},
      );
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
