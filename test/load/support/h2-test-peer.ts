// A test-only HTTP/2 server peer on a Unix socket: it writes raw frames with node:net, so a test can
// send what node:http2 never would on demand (padding, header blocks split over CONTINUATION, HPACK
// dynamic-table references and size updates, oversized or truncated frames), and it keeps every frame
// the client sends back for the test to check. It decides nothing itself: each test scripts it.
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';

export const FRAME = { DATA: 0, HEADERS: 1, RST_STREAM: 3, SETTINGS: 4, PUSH_PROMISE: 5, PING: 6, GOAWAY: 7, WINDOW_UPDATE: 8, CONTINUATION: 9 } as const;
export const FLAG = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4, PADDED: 0x8, PRIORITY: 0x20 } as const;
export const H2_ERROR = {
  NO_ERROR: 0,
  PROTOCOL_ERROR: 1,
  INTERNAL_ERROR: 2,
  FLOW_CONTROL_ERROR: 3,
  FRAME_SIZE_ERROR: 6,
  REFUSED_STREAM: 7,
  CANCEL: 8,
  COMPRESSION_ERROR: 9,
  ENHANCE_YOUR_CALM: 11,
} as const;
export const SETTING = { HEADER_TABLE_SIZE: 1, ENABLE_PUSH: 2, MAX_CONCURRENT_STREAMS: 3, INITIAL_WINDOW_SIZE: 4, MAX_FRAME_SIZE: 5 } as const;

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export interface Frame {
  type: number;
  flags: number;
  stream: number;
  payload: Buffer;
}

export function frame(type: number, flags: number, stream: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const h = Buffer.alloc(9);
  h.writeUIntBE(payload.length, 0, 3);
  h[3] = type;
  h[4] = flags;
  h.writeUInt32BE(stream, 5);
  return Buffer.concat([h, payload]);
}

/** A padded payload: the pad-length byte, the content, then `pad` zero bytes. */
export function padded(content: Buffer, pad: number): Buffer {
  if (pad > 255) throw new Error(`padding is at most 255 bytes (one length byte), got ${pad}`);
  return Buffer.concat([Buffer.from([pad]), content, Buffer.alloc(pad)]);
}

export function settingsPayload(settings: Array<[number, number]>): Buffer {
  const b = Buffer.alloc(6 * settings.length);
  settings.forEach(([id, value], i) => {
    b.writeUInt16BE(id, 6 * i);
    b.writeUInt32BE(value, 6 * i + 2);
  });
  return b;
}

export function goawayPayload(lastStream: number, code: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeUInt32BE(lastStream, 0);
  b.writeUInt32BE(code, 4);
  return b;
}

export function u32(v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(v);
  return b;
}

/** An HPACK integer (RFC 7541 §5.1) with an N-bit prefix, OR-ed into the first byte's high bits. */
function hpackInt(value: number, prefixBits: number, high: number): Buffer {
  const max = (1 << prefixBits) - 1;
  if (value < max) return Buffer.from([high | value]);
  const out = [high | max];
  let rest = value - max;
  while (rest >= 0x80) {
    out.push((rest & 0x7f) | 0x80);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
  return Buffer.from(out);
}

/** A raw (not Huffman-coded) string literal. */
function hpackString(s: string): Buffer {
  const b = Buffer.from(s, 'latin1');
  return Buffer.concat([hpackInt(b.length, 7, 0), b]);
}

function hpackLiteral(high: number, prefixBits: number, name: number | string, value: string): Buffer {
  const head = typeof name === 'number' ? hpackInt(name, prefixBits, high) : Buffer.concat([Buffer.from([high]), hpackString(name)]);
  return Buffer.concat([head, hpackString(value)]);
}

/** The HPACK representations a server may send, written byte for byte as the test asks. */
export const hpack = {
  /** An indexed field: 1..61 static, 62.. the dynamic table, newest first. */
  indexed: (index: number) => hpackInt(index, 7, 0x80),
  /** A literal with incremental indexing: it enters the dynamic table. Name: an index or a new name. */
  add: (name: number | string, value: string) => hpackLiteral(0x40, 6, name, value),
  /** A literal without indexing. */
  literal: (name: number | string, value: string) => hpackLiteral(0x00, 4, name, value),
  sizeUpdate: (size: number) => hpackInt(size, 5, 0x20),
};

/** Static table indexes the responses below use (RFC 7541 Appendix A). */
export const STATIC = { STATUS_200: 8, CONTENT_TYPE: 31 } as const;

/** :status 200 and content-type application/grpc: the headers of a gRPC response. */
export function responseHeaders(): Buffer {
  return Buffer.concat([hpack.indexed(STATIC.STATUS_200), hpack.literal(STATIC.CONTENT_TYPE, 'application/grpc')]);
}

/** grpc-status (and grpc-message): trailers, or with responseHeaders() a Trailers-Only response. */
export function statusFields(code: number, message?: string): Buffer {
  return Buffer.concat([hpack.literal('grpc-status', String(code)), message === undefined ? Buffer.alloc(0) : hpack.literal('grpc-message', message)]);
}

/** A gRPC length-prefixed message (not compressed). */
export function grpcMessage(body: Buffer): Buffer {
  const h = Buffer.alloc(5);
  h.writeUInt32BE(body.length, 1);
  return Buffer.concat([h, body]);
}

export class ConnectionClosed extends Error {
  constructor(what: string) {
    super(`the client closed the connection while the test peer waited for ${what}`);
  }
}

/** One accepted connection: what the client sent, and ways to answer it. */
export class PeerConnection {
  /** Every frame the client sent after its preface, in order. */
  readonly frames: Frame[] = [];
  /** Set when the client's first bytes were not the HTTP/2 preface. */
  badPreface = false;
  closed = false;
  private buf = Buffer.alloc(0);
  private prefaceSeen = false;
  private taken = new Set<number>();
  private corked = false;
  private wake: Array<() => void> = [];

  constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    socket.on('error', () => {});
    socket.on('close', () => {
      this.closed = true;
      this.notify();
    });
  }

  private read(chunk: Buffer): void {
    this.buf = Buffer.concat([this.buf, chunk]);
    if (!this.prefaceSeen) {
      if (this.buf.length < PREFACE.length) return;
      if (!this.buf.subarray(0, PREFACE.length).equals(PREFACE)) {
        this.badPreface = true;
        this.socket.destroy();
        return;
      }
      this.prefaceSeen = true;
      this.buf = this.buf.subarray(PREFACE.length);
    }
    while (this.buf.length >= 9) {
      const len = this.buf.readUIntBE(0, 3);
      if (this.buf.length < 9 + len) break;
      this.frames.push({
        type: this.buf[3]!,
        flags: this.buf[4]!,
        stream: this.buf.readUInt32BE(5) & 0x7fffffff,
        payload: Buffer.from(this.buf.subarray(9, 9 + len)),
      });
      this.buf = this.buf.subarray(9 + len);
    }
    this.notify();
  }

  private notify(): void {
    for (const w of this.wake.splice(0)) w();
  }

  /** The first frame from the client that matches and was not taken before; waits for it. */
  async next(what: string, match: (f: Frame) => boolean, timeoutMs = 5000): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const i = this.frames.findIndex((f, i) => !this.taken.has(i) && match(f));
      if (i >= 0) {
        this.taken.add(i);
        return this.frames[i]!;
      }
      if (this.closed) throw new ConnectionClosed(what);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`the test peer waited ${timeoutMs} ms for ${what} in vain`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The stream id of the client's next request (its HEADERS frame). */
  async request(): Promise<number> {
    return (await this.next('a request', (f) => f.type === FRAME.HEADERS)).stream;
  }

  send(type: number, flags: number, stream: number, payload?: Buffer): void {
    this.write(frame(type, flags, stream, payload));
  }

  /**
   * Everything written in one turn of the event loop leaves in one write: the client reads it
   * together, and a client that gives up on the connection halfway cannot make a later write of
   * ours fail (EPIPE), which would end the socket before its last frames (a GOAWAY) were read.
   */
  write(raw: Buffer): void {
    if (this.closed) return;
    if (!this.corked) {
      this.corked = true;
      this.socket.cork();
      process.nextTick(() => {
        this.corked = false;
        this.socket.uncork();
      });
    }
    this.socket.write(raw);
  }

  /** A whole successful unary response: headers, one message, trailers with grpc-status 0. */
  respondOk(stream: number, body: Buffer): void {
    this.write(
      Buffer.concat([
        frame(FRAME.HEADERS, FLAG.END_HEADERS, stream, responseHeaders()),
        frame(FRAME.DATA, 0, stream, grpcMessage(body)),
        frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, stream, statusFields(0)),
      ]),
    );
  }

  /** The GOAWAY frames the client sent: last stream id and error code. */
  goaways(): Array<{ lastStream: number; code: number }> {
    return this.frames
      .filter((f) => f.type === FRAME.GOAWAY)
      .map((f) => ({ lastStream: f.payload.readUInt32BE(0) & 0x7fffffff, code: f.payload.readUInt32BE(4) }));
  }

  /** Half-closes, as a server that stops writing. */
  end(): void {
    this.socket.end();
  }
}

export interface TestPeer {
  socket: string;
  /** Every connection accepted so far, in order. */
  connections: PeerConnection[];
  /** What went wrong in the test's script (a frame waited for in vain), other than the client leaving. */
  errors: Error[];
  close(): Promise<void>;
}

/**
 * Listens on <dir>/peer.sock; each accepted connection runs `script` (its index counts from 0).
 * The server's SETTINGS are the script's to send, or not.
 */
export async function startTestPeer(dir: string, script: (conn: PeerConnection, index: number) => Promise<void>): Promise<TestPeer> {
  const socket = join(dir, 'peer.sock');
  const connections: PeerConnection[] = [];
  const errors: Error[] = [];
  const running: Promise<void>[] = [];
  const server: Server = createServer((s) => {
    const conn = new PeerConnection(s);
    const index = connections.push(conn) - 1;
    running.push(
      script(conn, index).catch((err: Error) => {
        if (!(err instanceof ConnectionClosed)) errors.push(err);
      }),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socket, resolve);
  });
  return {
    socket,
    connections,
    errors,
    async close() {
      for (const c of connections) c.socket.destroy();
      await Promise.all(running);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
