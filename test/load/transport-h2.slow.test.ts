// The node:http2 worker transport against real servers on Unix sockets in a temp dir: a grpc-js
// server (behind a relay that counts connections), and a raw HTTP/2 server for responses grpc-js
// servers do not produce on demand (explicit Trailers-Only, plain HTTP errors). Where both clients
// can see the same answer, the h2 transport must report what the grpc-js client reports.
import * as grpc from '@grpc/grpc-js';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import * as http2 from 'node:http2';
import { createConnection, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Caller } from '../../src/load/worker/caller.js';
import type { ConnectionMode, LoadMethod } from '../../src/load/worker/messages.js';
import { H2Caller, decodeGrpcMessage, frameMessage, grpcTimeout } from '../../src/load/worker/transport-h2.js';
import type { Transport } from '../../src/load/worker/transport.js';
import { encodeJwtSvidRequest } from '../../src/load/worker/wire.js';

type Answer = { ok: Buffer } | { code: number; details: string } | 'never';

interface TestServer {
  socket: string;
  accepted: number;
  open: number;
  /** What the next FetchJWTSVID calls get. */
  answer: Answer;
  /** Requests seen: security header value and request bytes. */
  seen: Array<{ header: unknown; request: Buffer; timeout: unknown }>;
  cancelled: number;
  streamsOpened: number;
  close(): Promise<void>;
}

let dir = '';
const cleanups: Array<() => Promise<void> | void> = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'attestorm-h2-'));
});
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
  rmSync(dir, { recursive: true, force: true });
});

const pass = (b: Buffer) => b;

/** A Unix-socket relay counting connections; close() also ends connections a client left open. */
function relay(listenOn: string, target: string, counts: { accepted: number; open: number }): Promise<{ close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    counts.accepted++;
    counts.open++;
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    const upstream = createConnection(target);
    client.pipe(upstream).pipe(client);
    let closed = false;
    const done = () => {
      if (closed) return;
      closed = true;
      counts.open--;
      client.destroy();
      upstream.destroy();
    };
    client.on('close', done).on('error', done);
    upstream.on('close', done).on('error', done);
  });
  const close = () =>
    new Promise<void>((resolve) => {
      for (const c of sockets) c.destroy();
      server.close(() => resolve());
    });
  return new Promise((resolve) => server.listen(listenOn, () => resolve({ close })));
}

async function grpcServer(): Promise<TestServer> {
  const inner = join(dir, 'inner.sock');
  const server = new grpc.Server();
  const state: TestServer = {
    socket: join(dir, 'agent.sock'),
    accepted: 0,
    open: 0,
    answer: { ok: Buffer.from('fixed response') },
    seen: [],
    cancelled: 0,
    streamsOpened: 0,
    close: async () => {},
  };
  server.register<Buffer, Buffer>(
    '/SpiffeWorkloadAPI/FetchJWTSVID',
    (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) => {
      state.seen.push({ header: call.metadata.get('workload.spiffe.io'), request: call.request, timeout: call.getDeadline() });
      call.on('cancelled', () => state.cancelled++);
      const a = state.answer;
      if (a === 'never') return;
      if ('ok' in a) cb(null, a.ok);
      else cb({ code: a.code, details: a.details });
    },
    pass,
    pass,
    'unary',
  );
  server.register<Buffer, Buffer>(
    '/SpiffeWorkloadAPI/FetchX509SVID',
    (call: grpc.ServerWritableStream<Buffer, Buffer>) => {
      state.streamsOpened++;
      call.on('cancelled', () => state.cancelled++);
      call.write(Buffer.from('first'));
      // The stream stays open, as an agent's does: only the client's cancel ends it.
    },
    pass,
    pass,
    'serverStream',
  );
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix:${inner}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
  );
  const r = await relay(state.socket, inner, state);
  state.close = async () => {
    await r.close();
    server.forceShutdown();
  };
  cleanups.push(() => state.close());
  return state;
}

/** A raw HTTP/2 server answering every stream with `respond` (for answers grpc-js servers never give). */
async function rawServer(respond: (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => void): Promise<string> {
  const socket = join(dir, 'raw.sock');
  const server = http2.createServer();
  server.on('stream', respond);
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (s) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const s of sessions) s.destroy();
        server.close(() => resolve());
      }),
  );
  return socket;
}

function call(t: Transport, method: LoadMethod = 'FetchJWTSVID'): Promise<{ code: number; details: string; response: Buffer | null; ms: number }> {
  const start = Date.now();
  return new Promise((resolve) => t.call(method, (code, details, response) => resolve({ code, details, response, ms: Date.now() - start })));
}

function h2(socket: string, mode: ConnectionMode = 'per-call', deadlineMs = 1000): H2Caller {
  const c = new H2Caller(socket, mode, deadlineMs, 'attestorm', false);
  cleanups.push(() => c.close());
  return c;
}

function grpcJs(socket: string, mode: ConnectionMode = 'per-call', deadlineMs = 1000): Caller {
  const c = new Caller(socket, mode, deadlineMs, 'attestorm', false);
  cleanups.push(() => c.close());
  return c;
}

async function until(cond: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('wire helpers', () => {
  it('frames messages, formats deadlines, percent-decodes grpc-message', () => {
    expect(frameMessage(Buffer.from([1, 2, 3]))).toEqual(Buffer.from([0, 0, 0, 0, 3, 1, 2, 3]));
    expect(frameMessage(Buffer.alloc(0))).toEqual(Buffer.alloc(5));
    expect(grpcTimeout(1000)).toBe('1000m');
    expect(grpcTimeout(600_000)).toBe('600000m');
    expect(decodeGrpcMessage('rate%20limit%20100%25')).toBe('rate limit 100%');
    expect(decodeGrpcMessage('bad %E0%A4%A escape')).toBe('bad %E0%A4%A escape');
    expect(decodeGrpcMessage(undefined)).toBe('');
  });
});

describe('H2Caller against a grpc-js server', () => {
  it('OK unary: the response bytes, the request as framed, the security header and deadline sent', async () => {
    const server = await grpcServer();
    const big = Buffer.alloc(100_000, 7); // spans several DATA frames
    server.answer = { ok: big };
    const r = await call(h2(server.socket, 'per-call', 5000));
    expect(r.code).toBe(0);
    expect(r.details).toBe('');
    expect(r.response).toEqual(big);
    expect(server.seen).toHaveLength(1);
    expect(server.seen[0]!.header).toEqual(['true']);
    expect(server.seen[0]!.request).toEqual(encodeJwtSvidRequest('attestorm'));
    // grpc-timeout reached the server: its deadline is the client's 5 s from the call's start.
    const left = Number(server.seen[0]!.timeout) - Date.now();
    expect(left).toBeGreaterThan(3000);
    expect(left).toBeLessThanOrEqual(5000);
  });

  it('status codes and details from the server (percent-encoded on the wire) are what grpc-js reports', async () => {
    const server = await grpcServer();
    const cases = [
      { code: grpc.status.UNAVAILABLE, details: 'rate limit exceeded for /SpiffeWorkloadAPI/FetchJWTSVID' },
      { code: grpc.status.RESOURCE_EXHAUSTED, details: 'rate limit exceeded: 100% of 10/s, ключ=pod, 改行\nnext line' },
      { code: grpc.status.PERMISSION_DENIED, details: 'no identity issued' },
      { code: grpc.status.INVALID_ARGUMENT, details: 'audience must be specified' },
    ];
    for (const c of cases) {
      server.answer = c;
      const viaH2 = await call(h2(server.socket));
      const viaGrpcJs = await call(grpcJs(server.socket));
      expect({ code: viaH2.code, details: viaH2.details }).toEqual(c);
      expect({ code: viaGrpcJs.code, details: viaGrpcJs.details }).toEqual(c);
      expect(viaH2.response).toBeNull();
    }
  });

  it('an unimplemented method (a Trailers-Only answer from grpc-js) is UNIMPLEMENTED, as grpc-js says', async () => {
    const server = await grpcServer();
    const viaH2 = await call(h2(server.socket), 'FetchJWTBundles');
    const viaGrpcJs = await call(grpcJs(server.socket), 'FetchJWTBundles');
    expect(viaH2.code).toBe(grpc.status.UNIMPLEMENTED);
    expect(viaH2).toMatchObject({ code: viaGrpcJs.code, details: viaGrpcJs.details });
  });

  it('deadline exceeded: the client gives up on time, cancels the stream and (per-call) drops the connection', async () => {
    const server = await grpcServer();
    server.answer = 'never';
    const r = await call(h2(server.socket, 'per-call', 300));
    expect(r.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(r.details).toBe('Deadline exceeded');
    expect(r.ms).toBeGreaterThanOrEqual(290);
    expect(r.ms).toBeLessThan(2000);
    // The server saw the call cancelled, and the connection is gone.
    await until(() => server.cancelled === 1 && server.open === 0);
    expect(server.accepted).toBe(1);
  });

  it('deadline exceeded per-worker: the stream is cancelled, the connection kept for the next call', async () => {
    const server = await grpcServer();
    server.answer = 'never';
    const c = h2(server.socket, 'per-worker', 200);
    expect((await call(c)).code).toBe(grpc.status.DEADLINE_EXCEEDED);
    await until(() => server.cancelled === 1);
    server.answer = { ok: Buffer.from('ok now') };
    const r = await call(c);
    expect(r.code).toBe(0);
    expect(r.response).toEqual(Buffer.from('ok now'));
    expect(server.accepted).toBe(1);
    expect(c.channelsOpened).toBe(1);
  });

  it('per-call opens one connection per call and closes each; per-worker reuses one', async () => {
    const server = await grpcServer();
    const perCall = h2(server.socket, 'per-call');
    for (let i = 0; i < 20; i++) expect((await call(perCall)).code).toBe(0);
    await until(() => server.open === 0);
    expect(server.accepted).toBe(20);
    expect(perCall.channelsOpened).toBe(20);

    const perWorker = h2(server.socket, 'per-worker');
    for (let i = 0; i < 20; i++) expect((await call(perWorker)).code).toBe(0);
    expect(server.accepted).toBe(21);
    expect(server.open).toBe(1);
    perWorker.close();
    await until(() => server.open === 0);
  });

  it('per-retry reuses its connection while calls succeed and reconnects after each error', async () => {
    const server = await grpcServer();
    const c = h2(server.socket, 'per-retry');
    for (let i = 0; i < 5; i++) expect((await call(c)).code).toBe(0);
    expect(server.accepted).toBe(1);
    server.answer = { code: grpc.status.UNAVAILABLE, details: 'rate limit exceeded for /SpiffeWorkloadAPI/FetchJWTSVID' };
    for (let i = 0; i < 3; i++) expect((await call(c)).code).toBe(grpc.status.UNAVAILABLE);
    server.answer = { ok: Buffer.from('x') };
    expect((await call(c)).code).toBe(0);
    // The first connection served 5 OK + 1 error; errors 2 and 3 each had a fresh one, then one more.
    expect(server.accepted).toBe(4);
    await until(() => server.open === 1);
  });

  it('server stream: the first message settles OK, then the client cancels and the server sees it', async () => {
    const server = await grpcServer();
    const c = h2(server.socket, 'per-call');
    const r = await call(c, 'FetchX509SVID');
    expect(r.code).toBe(0);
    expect(server.streamsOpened).toBe(1);
    await until(() => server.cancelled === 1 && server.open === 0);

    const w = h2(server.socket, 'per-worker');
    for (let i = 0; i < 3; i++) expect((await call(w, 'FetchX509SVID')).code).toBe(0);
    await until(() => server.cancelled === 4);
    expect(server.accepted).toBe(2);
  });
});

describe('H2Caller on HTTP-level failures', () => {
  it('explicit Trailers-Only responses: grpc-status and percent-decoded grpc-message from the headers', async () => {
    const socket = await rawServer((stream) => {
      stream.respond(
        {
          ':status': 200,
          'content-type': 'application/grpc',
          'grpc-status': '8',
          'grpc-message': 'rate%20limit%20exceeded%20for%20/SpiffeWorkloadAPI/FetchJWTSVID%20%E2%80%94%20100%25',
        },
        { endStream: true },
      );
    });
    const viaH2 = await call(h2(socket));
    expect(viaH2).toMatchObject({
      code: grpc.status.RESOURCE_EXHAUSTED,
      details: 'rate limit exceeded for /SpiffeWorkloadAPI/FetchJWTSVID — 100%',
      response: null,
    });
    const viaGrpcJs = await call(grpcJs(socket));
    expect(viaGrpcJs).toMatchObject({ code: viaH2.code, details: viaH2.details });
  });

  it('an HTTP error status without grpc-status maps as grpc-js maps it', async () => {
    for (const [status, code] of [
      [503, grpc.status.UNAVAILABLE],
      [404, grpc.status.UNIMPLEMENTED],
      [401, grpc.status.UNAUTHENTICATED],
      [500, grpc.status.UNKNOWN],
    ] as const) {
      const socket = await rawServer((stream) => {
        stream.respond({ ':status': status }, { endStream: true });
      });
      const viaH2 = await call(h2(socket));
      expect(viaH2.code, `HTTP ${status}`).toBe(code);
      expect((await call(grpcJs(socket))).code, `grpc-js, HTTP ${status}`).toBe(code);
      for (const fn of cleanups.splice(-3).reverse()) await fn();
    }
  });

  it('on its deadline the client resets the stream with CANCEL itself (a raw server enforces no grpc-timeout)', async () => {
    const resets: number[] = [];
    const socket = await rawServer((stream) => {
      // Never answers; records how the client ended the stream.
      stream.on('close', () => resets.push(stream.rstCode));
    });
    const c = h2(socket, 'per-worker', 200);
    const r = await call(c);
    expect(r).toMatchObject({ code: grpc.status.DEADLINE_EXCEEDED, details: 'Deadline exceeded' });
    await until(() => resets.length === 1);
    expect(resets).toEqual([http2.constants.NGHTTP2_CANCEL]);
    // per-worker: the connection outlives the cancelled call.
    const again = await call(c);
    expect(again.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    await until(() => resets.length === 2);
    expect(c.channelsOpened).toBe(1);
  });

  it('OK without a message is an error for a unary call', async () => {
    const socket = await rawServer((stream) => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.end();
    });
    const viaH2 = await call(h2(socket));
    expect(viaH2.code).toBe(grpc.status.UNIMPLEMENTED);
    expect(viaH2.response).toBeNull();
  });

  it('a message split across writes is reassembled', async () => {
    const payload = Buffer.from('split across three DATA frames');
    const framed = frameMessage(payload);
    const socket = await rawServer((stream) => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0', 'grpc-message': 'OK' }));
      stream.write(framed.subarray(0, 3));
      setTimeout(() => {
        stream.write(framed.subarray(3, 10));
        setTimeout(() => stream.end(framed.subarray(10)), 20);
      }, 20);
    });
    const r = await call(h2(socket));
    expect(r).toMatchObject({ code: 0, response: payload });
  });

  it('connection refused, missing socket and reset connections are UNAVAILABLE', async () => {
    // A socket file nobody listens on: connect() is refused.
    const refusedPath = join(dir, 'refused.sock');
    const listener = createServer();
    await new Promise<void>((resolve) => listener.listen(refusedPath, resolve));
    // Closing unlinks the file on some Node versions; keep one only when it stays.
    await new Promise<void>((resolve) => listener.close(() => resolve()));
    const paths = [join(dir, 'missing.sock'), ...(existsSync(refusedPath) ? [refusedPath] : [])];
    for (const p of paths) {
      for (const mode of ['per-call', 'per-worker'] as const) {
        const r = await call(h2(p, mode));
        expect(r.code, `${p} ${mode}`).toBe(grpc.status.UNAVAILABLE);
        expect(r.details).toMatch(/ECONNREFUSED|ENOENT/);
      }
    }

    // A server that accepts and at once closes the connection.
    const resetPath = join(dir, 'reset.sock');
    let resets = 0;
    const resetter = createServer((s) => {
      resets++;
      s.destroy();
    });
    await new Promise<void>((resolve) => resetter.listen(resetPath, resolve));
    cleanups.push(() => new Promise<void>((resolve) => resetter.close(() => resolve())));
    const c = h2(resetPath, 'per-worker');
    for (let i = 0; i < 3; i++) expect((await call(c)).code).toBe(grpc.status.UNAVAILABLE);
    // A broken connection is replaced, not reused.
    expect(resets).toBe(3);
    expect(c.channelsOpened).toBe(3);
  });
});
