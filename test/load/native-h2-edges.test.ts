// The native worker's HTTP/2 and HPACK against a server that misbehaves on purpose (the raw-frame test
// peer): padding, CONTINUATION, GOAWAY, RST_STREAM, SETTINGS, the HPACK dynamic table and its size
// updates, Trailers-Only responses and malformed frames. Each case checks what the worker reported
// (per-status counts from its 'interval' lines, its 'done'), what it sent back (SETTINGS ACK, GOAWAY,
// RST_STREAM) and that it exited cleanly: never a crash, a hang or a call counted as another's. Every
// case runs on the real build and on one with AddressSanitizer and UBSan, where any report fails it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { buildNativeWorker } from '../../src/load/native/build.js';
import { FIXED_JWT_RESPONSE } from './support/bare-server.js';
import {
  FLAG,
  FRAME,
  H2_ERROR,
  SETTING,
  frame,
  goawayPayload,
  grpcMessage,
  hpack,
  padded,
  responseHeaders,
  settingsPayload,
  startTestPeer,
  statusFields,
  u32,
  type PeerConnection,
  type TestPeer,
} from './support/h2-test-peer.js';
import { runNativeWorker, type NativeRun, type NativeRunOptions } from './support/native-worker-run.js';
import { SANITIZER_ENV, buildFailingMallocWorker, buildSanitizedWorker, type Variant } from './support/native-variants.js';
import { skipNote } from '../support/skip-note.js';

const BODY = FIXED_JWT_RESPONSE;
const RATE_LIMITED = 'rate limit exceeded for /SpiffeWorkloadAPI/FetchJWTSVID';

const dirs: string[] = [];
const temp = (name: string) => {
  const d = mkdtempSync(join(tmpdir(), `attestorm-${name}-`));
  dirs.push(d);
  return d;
};
const peers: TestPeer[] = [];
afterEach(async () => {
  for (const p of peers.splice(0)) await p.close();
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const variants: Record<string, Variant & { env?: NodeJS.ProcessEnv }> = {};
let failingMalloc: Variant = { ok: false, reason: 'not built' };
beforeAll(async () => {
  const built = await buildNativeWorker();
  variants.cc = built.ok ? { ok: true, binary: built.binary } : { ok: false, reason: built.reason };
  const dir = temp('native-variants');
  const sanitized = built.ok ? await buildSanitizedWorker(dir) : variants.cc;
  variants['asan+ubsan'] = sanitized.ok ? { ...sanitized, env: { ...process.env, ...SANITIZER_ENV } } : sanitized;
  failingMalloc = built.ok ? await buildFailingMallocWorker(dir) : variants.cc;
}, 120_000);

type Answer = (c: PeerConnection, stream: number, n: number) => void | Promise<void>;
type Script = (c: PeerConnection, index: number) => Promise<void>;

/** Answers each request of a connection in turn; n counts requests over all connections. */
function answering(answer: (c: PeerConnection, stream: number, n: number, connection: number) => void | Promise<void>): Script {
  let n = 0;
  return async (c, index) => {
    for (;;) {
      const stream = await c.request();
      await answer(c, stream, n++, index);
    }
  };
}

/** A first connection answered by `bad`, every later one with a good response. */
function badThenGood(bad: Answer): Script {
  return answering((c, s, n, connection) => (connection === 0 ? bad(c, s, n) : c.respondOk(s, BODY)));
}

/** The worker must have run to its end: every call counted, 'done' sent, exit 0, nothing on stderr. */
function expectClean(run: NativeRun, calls: number): void {
  expect(run.hung, 'the worker hung').toBe(false);
  expect(run.stderr, 'the worker wrote to stderr (a sanitizer report?)').toBe('');
  expect(run.fatal).toEqual([]);
  expect({ exitCode: run.exitCode, signal: run.signal }).toEqual({ exitCode: 0, signal: null });
  expect(run.done).toEqual({ calls });
}

describe.each(['cc', 'asan+ubsan'])('native worker HTTP/2 edges (%s build)', (name) => {
  async function scenario(ctx: TestContext, script: Script, opts: Omit<NativeRunOptions, 'socket'>): Promise<{ run: NativeRun; peer: TestPeer }> {
    const v = variants[name]!;
    if (!v.ok) {
      skipNote(`native worker HTTP/2 edge tests, ${name} build`, v.reason);
      ctx.skip();
    }
    const binary = (v as { binary: string }).binary;
    const peer = await startTestPeer(temp('h2-peer'), script);
    peers.push(peer);
    const run = await runNativeWorker(binary, { env: v.env, ...opts, socket: peer.socket });
    expectClean(run, opts.maxCalls);
    expect(peer.errors.map((e) => e.message)).toEqual([]);
    expect(peer.connections.map((c) => c.badPreface)).not.toContain(true);
    return { run, peer };
  }

  it('a well-formed response is one OK call; per-worker calls share the connection', async (ctx) => {
    const { run, peer } = await scenario(
      ctx,
      answering((c, s) => c.respondOk(s, BODY)),
      { maxCalls: 3 },
    );
    expect(run.byCode).toEqual({ OK: 3 });
    expect(run.counts).toEqual({ ok: 3, rateLimited: 0, deadlineExceeded: 0, error: 0 });
    expect(peer.connections).toHaveLength(1);
  });

  it('strips DATA padding (PADDED), also from a frame of padding only and from one of the maximum frame size', async (ctx) => {
    const msg = grpcMessage(BODY);
    // One frame of 16,384 bytes, the most padding one byte can say, and a message in the rest.
    const full = padded(grpcMessage(Buffer.alloc(16_384 - 1 - 255 - 5, 1)), 255);
    const script = answering((c, s, n) => {
      c.send(FRAME.HEADERS, FLAG.END_HEADERS, s, responseHeaders());
      if (n === 0) {
        // Zero padding read as data would be a second (empty) message: "Too many responses".
        c.send(FRAME.DATA, FLAG.PADDED, s, padded(msg.subarray(0, 7), 20));
        c.send(FRAME.DATA, FLAG.PADDED, s, padded(Buffer.alloc(0), 30));
        c.send(FRAME.DATA, FLAG.PADDED, s, padded(msg.subarray(7), 255));
      } else {
        c.send(FRAME.DATA, FLAG.PADDED, s, full);
      }
      c.send(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, s, statusFields(0));
    });
    const { run } = await scenario(ctx, script, { maxCalls: 2 });
    expect(full.length).toBe(16_384);
    expect(run.byCode).toEqual({ OK: 2 });
  });

  it('strips HEADERS padding and priority fields, in headers and trailers', async (ctx) => {
    const priority = Buffer.from([0, 0, 0, 0, 15]);
    const script = answering((c, s) => {
      c.send(
        FRAME.HEADERS,
        FLAG.END_HEADERS | FLAG.PADDED | FLAG.PRIORITY,
        s,
        Buffer.concat([Buffer.from([12]), priority, responseHeaders(), Buffer.alloc(12)]),
      );
      c.send(FRAME.DATA, 0, s, grpcMessage(BODY));
      c.send(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM | FLAG.PADDED, s, padded(statusFields(0), 9));
    });
    const { run } = await scenario(ctx, script, { maxCalls: 2 });
    expect(run.byCode).toEqual({ OK: 2 });
  });

  it('reads header blocks split over CONTINUATION frames, END_STREAM taken from the HEADERS frame', async (ctx) => {
    const script = answering((c, s, n) => {
      const h = responseHeaders();
      c.send(FRAME.HEADERS, 0, s, h.subarray(0, 2)); // cut inside a literal
      c.send(FRAME.CONTINUATION, 0, s, h.subarray(2, 5));
      c.send(FRAME.CONTINUATION, 0, s); // empty: allowed
      c.send(FRAME.CONTINUATION, FLAG.END_HEADERS, s, h.subarray(5));
      c.send(FRAME.DATA, 0, s, grpcMessage(BODY));
      const t = n === 0 ? statusFields(7, 'no identity issued') : statusFields(0);
      c.send(FRAME.HEADERS, FLAG.END_STREAM, s, t.subarray(0, 4));
      c.send(FRAME.CONTINUATION, FLAG.END_HEADERS, s, t.subarray(4));
    });
    const { run, peer } = await scenario(ctx, script, { maxCalls: 2 });
    expect(run.byCode).toEqual({ PERMISSION_DENIED: 1, OK: 1 });
    expect(peer.connections).toHaveLength(1);
  });

  it('after a graceful GOAWAY it finishes the call in flight, then opens a new connection', async (ctx) => {
    const script = answering((c, s, _n, connection) => {
      if (connection === 0) c.send(FRAME.GOAWAY, 0, 0, goawayPayload(s, H2_ERROR.NO_ERROR));
      c.respondOk(s, BODY);
    });
    const { run, peer } = await scenario(ctx, script, { maxCalls: 3 });
    expect(run.byCode).toEqual({ OK: 3 });
    expect(peer.connections.map((c) => c.frames.filter((f) => f.type === FRAME.HEADERS).length)).toEqual([1, 2]);
  });

  it('a call above the last stream of a GOAWAY is UNAVAILABLE (never processed), and the next call reconnects', async (ctx) => {
    const script = badThenGood((c) => c.send(FRAME.GOAWAY, 0, 0, goawayPayload(0, H2_ERROR.NO_ERROR)));
    const { run, peer } = await scenario(ctx, script, { maxCalls: 2 });
    expect(run.byCode).toEqual({ UNAVAILABLE: 1, OK: 1 });
    expect(peer.connections).toHaveLength(2);
  });

  it.for([
    ['REFUSED_STREAM', H2_ERROR.REFUSED_STREAM, 'UNAVAILABLE'],
    ['CANCEL', H2_ERROR.CANCEL, 'CANCELLED'],
    ['ENHANCE_YOUR_CALM', H2_ERROR.ENHANCE_YOUR_CALM, 'RESOURCE_EXHAUSTED'],
    ['INTERNAL_ERROR', H2_ERROR.INTERNAL_ERROR, 'INTERNAL'],
    // As node reports a stream closed without a status: code 0, the connection's end.
    ['NO_ERROR', H2_ERROR.NO_ERROR, 'UNAVAILABLE'],
  ] as const)('RST_STREAM %s on the call in flight counts %s, and the connection stays', async ([, code, status], ctx) => {
    const script = answering((c, s, n) => {
      if (n > 0) return c.respondOk(s, BODY);
      c.send(FRAME.HEADERS, FLAG.END_HEADERS, s, responseHeaders());
      c.send(FRAME.RST_STREAM, 0, s, u32(code));
    });
    const { run, peer } = await scenario(ctx, script, { maxCalls: 2 });
    expect(run.byCode).toEqual({ [status]: 1, OK: 1 });
    expect(run.counts.error).toBe(1);
    expect(peer.connections).toHaveLength(1);
  });

  it("sends its SETTINGS first and acknowledges the server's, before any frame it sends after reading them", async (ctx) => {
    let n = 0;
    const script = async (c: PeerConnection) => {
      c.send(
        FRAME.SETTINGS,
        0,
        0,
        settingsPayload([
          [SETTING.MAX_CONCURRENT_STREAMS, 100],
          [SETTING.MAX_FRAME_SIZE, 1 << 20],
          [SETTING.HEADER_TABLE_SIZE, 0],
        ]),
      );
      for (;;) {
        const s = await c.request();
        // Nothing is answered until the SETTINGS sent before it are acknowledged.
        await c.next(`the SETTINGS ACK before answering stream ${s}`, (f) => f.type === FRAME.SETTINGS && (f.flags & FLAG.ACK) !== 0);
        const answer = Buffer.concat([
          frame(FRAME.HEADERS, FLAG.END_HEADERS, s, responseHeaders()),
          frame(FRAME.DATA, 0, s, grpcMessage(BODY)),
          frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, s, statusFields(0)),
        ]);
        // New SETTINGS behind the answer, in one write: read before the next call is sent.
        c.write(n++ < 2 ? Buffer.concat([answer, frame(FRAME.SETTINGS, 0, 0, settingsPayload([[SETTING.MAX_CONCURRENT_STREAMS, 50 - n]]))]) : answer);
      }
    };
    const { run, peer } = await scenario(ctx, script, { maxCalls: 3 });
    expect(run.byCode).toEqual({ OK: 3 });
    const frames = peer.connections[0]!.frames;
    const first = frames[0]!;
    expect({ type: first.type, flags: first.flags, stream: first.stream }).toEqual({ type: FRAME.SETTINGS, flags: 0, stream: 0 });
    expect(first.payload).toEqual(
      settingsPayload([
        [SETTING.ENABLE_PUSH, 0],
        [SETTING.INITIAL_WINDOW_SIZE, 1 << 20],
      ]),
    );
    const acks = frames.flatMap((f, i) => (f.type === FRAME.SETTINGS && f.flags & FLAG.ACK ? [i] : []));
    const requests = frames.flatMap((f, i) => (f.type === FRAME.HEADERS ? [i] : []));
    expect(acks).toHaveLength(3);
    expect(requests).toHaveLength(3);
    expect(acks[1]).toBeLessThan(requests[1]!);
    expect(acks[2]).toBeLessThan(requests[2]!);
    for (const i of acks) expect(frames[i]!.payload.length).toBe(0);
  });

  it("resolves the server's HPACK dynamic table: indexed fields, indexed names, renumbering after each entry", async (ctx) => {
    const script = answering((c, s, n) => {
      const send = (flags: number, ...parts: Buffer[]) => c.send(FRAME.HEADERS, FLAG.END_HEADERS | flags, s, Buffer.concat(parts));
      if (n === 0) {
        send(0, hpack.indexed(8), hpack.add(31, 'application/grpc')); // [content-type]
        c.send(FRAME.DATA, 0, s, grpcMessage(BODY));
        send(FLAG.END_STREAM, hpack.add('grpc-message', RATE_LIMITED), hpack.add('grpc-status', '0')); // [status 0, message, content-type]
      } else if (n === 1) {
        send(0, hpack.indexed(8), hpack.indexed(64));
        c.send(FRAME.DATA, 0, s, grpcMessage(BODY));
        send(FLAG.END_STREAM, hpack.indexed(62));
      } else if (n === 2) {
        // Trailers-Only: a new status 14 under the name of entry 62; then the message, now at 64.
        send(FLAG.END_STREAM, hpack.indexed(8), hpack.indexed(64), hpack.add(62, '14'), hpack.indexed(64));
      } else {
        send(0, hpack.indexed(8), hpack.indexed(65));
        c.send(FRAME.DATA, 0, s, grpcMessage(BODY));
        send(FLAG.END_STREAM, hpack.indexed(63));
      }
    });
    const { run, peer } = await scenario(ctx, script, { maxCalls: 4 });
    expect(run.byCode).toEqual({ OK: 3, UNAVAILABLE: 1 });
    expect(run.counts).toEqual({ ok: 3, rateLimited: 1, deadlineExceeded: 0, error: 0 });
    expect(peer.connections).toHaveLength(1);
  });

  it('applies dynamic table size updates: to 0 and back, shrinking evicts the oldest, an evicted entry is a COMPRESSION_ERROR', async (ctx) => {
    const ok = (c: PeerConnection, s: number, headers: Buffer, trailers: Buffer) => {
      c.send(FRAME.HEADERS, FLAG.END_HEADERS, s, headers);
      c.send(FRAME.DATA, 0, s, grpcMessage(BODY));
      c.send(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, s, trailers);
    };
    const script = answering((c, s, n, connection) => {
      if (connection > 0) return c.respondOk(s, BODY);
      if (n === 0) ok(c, s, responseHeaders(), hpack.add('grpc-status', '0')); // [status 0] (44 bytes)
      // Emptied and restored in one block; then [status 0, x-filler] (44 + 90 bytes).
      if (n === 1)
        ok(
          c,
          s,
          Buffer.concat([hpack.sizeUpdate(0), hpack.sizeUpdate(4096), responseHeaders()]),
          Buffer.concat([hpack.add('x-filler', 'f'.repeat(50)), hpack.add('grpc-status', '0')]),
        );
      // 50 bytes hold the newest entry only: x-filler goes, status 0 stays at 62.
      if (n === 2) ok(c, s, Buffer.concat([hpack.sizeUpdate(50), responseHeaders()]), hpack.indexed(62));
      if (n === 3) ok(c, s, Buffer.concat([hpack.sizeUpdate(0), responseHeaders()]), hpack.indexed(62));
    });
    const { run, peer } = await scenario(ctx, script, { maxCalls: 5 });
    expect(run.byCode).toEqual({ OK: 4, UNAVAILABLE: 1 });
    expect(peer.connections).toHaveLength(2);
    expect(peer.connections[0]!.goaways()).toEqual([{ lastStream: 0, code: H2_ERROR.COMPRESSION_ERROR }]);
  });

  it('reads Trailers-Only responses (grpc-status in HEADERS with END_STREAM), percent-decoding grpc-message', async (ctx) => {
    const only: Array<[number, string?]> = [[7, 'no identity issued'], [14, encodeURIComponent(RATE_LIMITED)], [8, RATE_LIMITED], [0]];
    const script = answering((c, s, n) => {
      const answer = only[n];
      if (!answer) return c.respondOk(s, BODY);
      c.send(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, s, Buffer.concat([responseHeaders(), statusFields(...answer)]));
    });
    const { run } = await scenario(ctx, script, { maxCalls: 5 });
    // Status 0 without a message is UNIMPLEMENTED for a unary call, as grpc-js has it.
    expect(run.byCode).toEqual({ PERMISSION_DENIED: 1, UNAVAILABLE: 1, RESOURCE_EXHAUSTED: 1, UNIMPLEMENTED: 1, OK: 1 });
    expect(run.counts).toEqual({ ok: 1, rateLimited: 2, deadlineExceeded: 0, error: 2 });
  });

  it("never gives a call the late answer of one it gave up on, and still decodes that answer's HPACK entries", async (ctx) => {
    const script = async (c: PeerConnection) => {
      const late = await c.request();
      const rst = await c.next('the RST_STREAM of the call past its deadline', (f) => f.type === FRAME.RST_STREAM);
      expect({ stream: rst.stream, code: rst.payload.readUInt32BE(0) }).toEqual({ stream: late, code: H2_ERROR.CANCEL });
      const s = await c.request();
      // The late stream's Trailers-Only answer adds [grpc-status 7, content-type]; the new call uses content-type at 63.
      c.send(
        FRAME.HEADERS,
        FLAG.END_HEADERS | FLAG.END_STREAM,
        late,
        Buffer.concat([hpack.indexed(8), hpack.add(31, 'application/grpc'), hpack.add('grpc-status', '7')]),
      );
      c.send(FRAME.HEADERS, FLAG.END_HEADERS, s, Buffer.concat([hpack.indexed(8), hpack.indexed(63)]));
      c.send(FRAME.DATA, 0, s, grpcMessage(BODY));
      c.send(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, s, statusFields(0));
    };
    const { run } = await scenario(ctx, script, { maxCalls: 2, deadlineMs: 300 });
    expect(run.byCode).toEqual({ DEADLINE_EXCEEDED: 1, OK: 1 });
    expect(run.counts).toEqual({ ok: 1, rateLimited: 0, deadlineExceeded: 1, error: 0 });
  });

  // Connection errors: the call in flight is UNAVAILABLE (its connection is gone), the worker tells
  // the server why with a GOAWAY (null: the server ended it), and the next call has a new connection.
  const headersThen = (c: PeerConnection, s: number) => c.send(FRAME.HEADERS, FLAG.END_HEADERS, s, responseHeaders());
  const broken: Array<[string, Answer, number | null]> = [
    [
      'a frame longer than the maximum frame size (16,384)',
      (c, s) => (headersThen(c, s), c.send(FRAME.DATA, 0, s, grpcMessage(Buffer.alloc(16_380)))),
      H2_ERROR.FRAME_SIZE_ERROR,
    ],
    [
      'a frame truncated by the end of the connection',
      (c, s) => (c.write(frame(FRAME.HEADERS, FLAG.END_HEADERS, s, responseHeaders()).subarray(0, 12)), c.end()),
      null,
    ],
    [
      'a GOAWAY with an error, then the end of the connection',
      (c, s) => (c.send(FRAME.GOAWAY, 0, 0, goawayPayload(s, H2_ERROR.ENHANCE_YOUR_CALM)), c.end()),
      null,
    ],
    [
      'an HPACK index beyond the dynamic table',
      (c, s) => c.send(FRAME.HEADERS, FLAG.END_HEADERS, s, Buffer.concat([hpack.indexed(8), hpack.indexed(70)])),
      H2_ERROR.COMPRESSION_ERROR,
    ],
    ['HPACK index 0', (c, s) => c.send(FRAME.HEADERS, FLAG.END_HEADERS, s, hpack.indexed(0)), H2_ERROR.COMPRESSION_ERROR],
    ['a literal naming an empty dynamic table entry', (c, s) => c.send(FRAME.HEADERS, FLAG.END_HEADERS, s, hpack.literal(62, 'x')), H2_ERROR.COMPRESSION_ERROR],
    [
      'a table size update above SETTINGS_HEADER_TABLE_SIZE',
      (c, s) => c.send(FRAME.HEADERS, FLAG.END_HEADERS, s, Buffer.concat([hpack.sizeUpdate(4097), responseHeaders()])),
      H2_ERROR.COMPRESSION_ERROR,
    ],
    [
      'a table size update after a field',
      (c, s) => c.send(FRAME.HEADERS, FLAG.END_HEADERS, s, Buffer.concat([hpack.indexed(8), hpack.sizeUpdate(0)])),
      H2_ERROR.COMPRESSION_ERROR,
    ],
    ['DATA padding as long as the payload', (c, s) => (headersThen(c, s), c.send(FRAME.DATA, FLAG.PADDED, s, Buffer.from([3, 0, 0]))), H2_ERROR.PROTOCOL_ERROR],
    [
      'HEADERS padding longer than the frame',
      (c, s) => c.send(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.PADDED, s, Buffer.concat([Buffer.from([200]), responseHeaders()])),
      H2_ERROR.PROTOCOL_ERROR,
    ],
    [
      'a PING inside a header block',
      (c, s) => (
        c.send(FRAME.HEADERS, 0, s, hpack.indexed(8)),
        c.send(FRAME.PING, 0, 0, Buffer.alloc(8)),
        c.send(FRAME.CONTINUATION, FLAG.END_HEADERS, s, hpack.literal(31, 'application/grpc'))
      ),
      H2_ERROR.PROTOCOL_ERROR,
    ],
    [
      'a CONTINUATION of another stream',
      (c, s) => (c.send(FRAME.HEADERS, 0, s, hpack.indexed(8)), c.send(FRAME.CONTINUATION, FLAG.END_HEADERS, s + 2, hpack.literal(31, 'application/grpc'))),
      H2_ERROR.PROTOCOL_ERROR,
    ],
    ['a CONTINUATION without HEADERS', (c, s) => c.send(FRAME.CONTINUATION, FLAG.END_HEADERS, s, responseHeaders()), H2_ERROR.PROTOCOL_ERROR],
    [
      'a PUSH_PROMISE (push is disabled)',
      (c, s) => c.send(FRAME.PUSH_PROMISE, FLAG.END_HEADERS, s, Buffer.concat([u32(2), hpack.indexed(2)])),
      H2_ERROR.PROTOCOL_ERROR,
    ],
    ['DATA on stream 0', (c) => c.send(FRAME.DATA, 0, 0, Buffer.alloc(4)), H2_ERROR.PROTOCOL_ERROR],
    ['SETTINGS with ENABLE_PUSH 1', (c) => c.send(FRAME.SETTINGS, 0, 0, settingsPayload([[SETTING.ENABLE_PUSH, 1]])), H2_ERROR.PROTOCOL_ERROR],
    [
      'SETTINGS with MAX_FRAME_SIZE below 16,384',
      (c) => c.send(FRAME.SETTINGS, 0, 0, settingsPayload([[SETTING.MAX_FRAME_SIZE, 16_383]])),
      H2_ERROR.PROTOCOL_ERROR,
    ],
    [
      'SETTINGS with INITIAL_WINDOW_SIZE above 2^31-1',
      (c) => c.send(FRAME.SETTINGS, 0, 0, settingsPayload([[SETTING.INITIAL_WINDOW_SIZE, 2 ** 31]])),
      H2_ERROR.FLOW_CONTROL_ERROR,
    ],
    ['SETTINGS of a length not a multiple of 6', (c) => c.send(FRAME.SETTINGS, 0, 0, Buffer.alloc(5)), H2_ERROR.FRAME_SIZE_ERROR],
    ['a SETTINGS ACK with a payload', (c) => c.send(FRAME.SETTINGS, FLAG.ACK, 0, Buffer.alloc(6)), H2_ERROR.FRAME_SIZE_ERROR],
    ['SETTINGS on a stream', (c, s) => c.send(FRAME.SETTINGS, 0, s, Buffer.alloc(0)), H2_ERROR.PROTOCOL_ERROR],
    ['a PING of 7 bytes', (c) => c.send(FRAME.PING, 0, 0, Buffer.alloc(7)), H2_ERROR.FRAME_SIZE_ERROR],
    ['an RST_STREAM of 3 bytes', (c, s) => c.send(FRAME.RST_STREAM, 0, s, Buffer.alloc(3)), H2_ERROR.FRAME_SIZE_ERROR],
  ];
  it.for(broken)('%s: the call is UNAVAILABLE, the next one has a new connection', async ([, bad, goaway], ctx) => {
    const { run, peer } = await scenario(ctx, badThenGood(bad), { maxCalls: 2 });
    expect(run.byCode).toEqual({ UNAVAILABLE: 1, OK: 1 });
    expect(peer.connections).toHaveLength(2);
    const [first] = peer.connections;
    expect(first!.frames.filter((f) => f.type === FRAME.HEADERS)).toHaveLength(1);
    expect(first!.goaways()).toEqual(goaway === null ? [] : [{ lastStream: 0, code: goaway }]);
  });
});

describe('native worker when an allocation fails', () => {
  it('an HPACK entry it cannot store ends the connection (INTERNAL_ERROR), never shifts the table under later calls', async (ctx) => {
    if (!failingMalloc.ok) {
      skipNote('native worker with failing malloc', failingMalloc.reason);
      return ctx.skip();
    }
    const binary = failingMalloc.binary;
    // The first call on a connection adds its status to the table; the second reads it by index.
    const script = async (c: PeerConnection) => {
      for (let k = 0; ; k++) {
        const s = await c.request();
        c.send(FRAME.HEADERS, FLAG.END_HEADERS, s, responseHeaders());
        c.send(FRAME.DATA, 0, s, grpcMessage(BODY));
        c.send(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, s, k === 0 ? hpack.add('grpc-status', '0') : hpack.indexed(62));
      }
    };
    const runWith = async (env: NodeJS.ProcessEnv) => {
      const peer = await startTestPeer(temp('h2-peer'), script);
      peers.push(peer);
      const run = await runNativeWorker(binary, { socket: peer.socket, maxCalls: 2, env });
      expectClean(run, 2);
      return { run, peer };
    };
    const control = await runWith(process.env);
    expect(control.run.byCode).toEqual({ OK: 2 });
    expect(control.peer.connections).toHaveLength(1);

    const failing = await runWith({ ...process.env, ATTESTORM_TEST_FAIL_MALLOC: '1' });
    expect(failing.run.byCode).toEqual({ UNAVAILABLE: 2 });
    expect(failing.peer.connections.map((c) => c.goaways())).toEqual([
      [{ lastStream: 0, code: H2_ERROR.INTERNAL_ERROR }],
      [{ lastStream: 0, code: H2_ERROR.INTERNAL_ERROR }],
    ]);
  });
});
