// gRPC over HTTP/2 written directly on node:http2: the lean transport for load workers. A worker
// then loads no grpc-js (~3.6 MiB per process before any call) and a per-call connection costs one
// socket and one HTTP/2 session, not a channel, subchannel, resolver and load balancer.
import * as http2 from 'node:http2';
import { connect as netConnect } from 'node:net';
import type { CallDone, Transport } from './transport.js';
import type { ConnectionMode, LoadMethod } from './messages.js';
import { EMPTY_REQUEST, METHOD_PATHS, STREAMING, decodeFirstJwtSvid, encodeJwtSvidRequest, encodeValidateRequest } from './wire.js';

// gRPC status codes used here (numeric, as grpc-js reports them).
const OK = 0;
const CANCELLED = 1;
const UNKNOWN = 2;
const DEADLINE_EXCEEDED = 4;
const PERMISSION_DENIED = 7;
const RESOURCE_EXHAUSTED = 8;
const UNIMPLEMENTED = 12;
const INTERNAL = 13;
const UNAVAILABLE = 14;
const UNAUTHENTICATED = 16;

const { NGHTTP2_CANCEL, NGHTTP2_REFUSED_STREAM, NGHTTP2_ENHANCE_YOUR_CALM, NGHTTP2_INADEQUATE_SECURITY, NGHTTP2_NO_ERROR } = http2.constants;

// Parsed once: node would parse an authority string into a URL for every connection.
const AUTHORITY = new URL('http://localhost');

// Tokens are refreshed well inside the default 5-minute JWT-SVID TTL.
const TOKEN_MAX_AGE_MS = 60_000;

/** The gRPC code grpc-js gives an HTTP status that came without a grpc-status. */
export function codeForHttpStatus(status: number): number {
  switch (status) {
    case 400:
      return INTERNAL;
    case 401:
      return UNAUTHENTICATED;
    case 403:
      return PERMISSION_DENIED;
    case 404:
      return UNIMPLEMENTED;
    case 429:
    case 502:
    case 503:
    case 504:
      return UNAVAILABLE;
    default:
      return UNKNOWN;
  }
}

/** The gRPC code for a stream the server reset (RST_STREAM) before sending a status. */
export function codeForRstStream(rstCode: number): number {
  switch (rstCode) {
    case NGHTTP2_REFUSED_STREAM:
      return UNAVAILABLE;
    case NGHTTP2_CANCEL:
      return CANCELLED;
    case NGHTTP2_ENHANCE_YOUR_CALM:
      return RESOURCE_EXHAUSTED;
    case NGHTTP2_INADEQUATE_SECURITY:
      return PERMISSION_DENIED;
    default:
      return INTERNAL;
  }
}

/** grpc-message is percent-encoded (RFC 3986 style); a malformed one is kept as sent. */
export function decodeGrpcMessage(raw: unknown): string {
  if (typeof raw !== 'string' || raw === '') return '';
  if (!raw.includes('%')) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** A gRPC length-prefixed message: compressed flag 0, 4-byte big-endian length, the bytes. */
export function frameMessage(message: Buffer): Buffer {
  const out = Buffer.allocUnsafe(5 + message.length);
  out[0] = 0;
  out.writeUInt32BE(message.length, 1);
  message.copy(out, 5);
  return out;
}

/** Deadline in the grpc-timeout format: at most 8 digits and a unit. */
export function grpcTimeout(ms: number): string {
  return ms < 1e8 ? `${Math.max(1, Math.ceil(ms))}m` : `${Math.ceil(ms / 1000)}S`;
}

/** One call's state. A class so V8 gives every call the same object shape. */
class Call {
  settled = false;
  deadlineHit = false;
  /** Set once: grpc-status from the headers (Trailers-Only) or the trailers. */
  code = -1;
  details = '';
  /** gRPC code for a non-200 :status, used only if no grpc-status arrives. */
  httpCode = -1;
  httpDetails = '';
  message: Buffer | null = null;
  messages = 0;
  pending: Buffer | null = null;
  error: Error | null = null;
  constructor(
    readonly owner: H2Caller,
    readonly session: http2.ClientHttp2Session,
    readonly stream: http2.ClientHttp2Stream,
    readonly streaming: boolean,
    readonly wantToken: boolean,
    readonly done: CallDone,
  ) {}
}

export class H2Caller implements Transport {
  readonly #socket: string;
  readonly #mode: ConnectionMode;
  readonly #audience: string;
  readonly #needToken: boolean;
  // Built once per run: node copies request headers, so one object serves every call.
  readonly #headers: Record<LoadMethod, http2.OutgoingHttpHeaders>;
  readonly #jwtFrame: Buffer;
  readonly #emptyFrame = frameMessage(EMPTY_REQUEST);
  #validateFrame: Buffer | null = null;
  #session: http2.ClientHttp2Session | null = null;
  #token: string | null = null;
  #tokenAt = 0;
  #current: Call | null = null;
  // One deadline timer per caller, re-armed with refresh() for each call (one call at a time).
  readonly #timer: NodeJS.Timeout;
  readonly #connectOptions: http2.SecureClientSessionOptions;
  /** Sessions (connections) opened so far (per-call: one per call). */
  channelsOpened = 0;

  constructor(socket: string, mode: ConnectionMode, deadlineMs: number, audience: string, needToken: boolean) {
    this.#socket = socket;
    this.#mode = mode;
    this.#audience = audience;
    this.#needToken = needToken;
    this.#jwtFrame = frameMessage(encodeJwtSvidRequest(audience));
    const timeout = grpcTimeout(deadlineMs);
    const headers = {} as Record<LoadMethod, http2.OutgoingHttpHeaders>;
    for (const [method, path] of Object.entries(METHOD_PATHS) as Array<[LoadMethod, string]>) {
      headers[method] = {
        ':method': 'POST',
        ':path': path,
        'content-type': 'application/grpc',
        te: 'trailers',
        'grpc-timeout': timeout,
        'workload.spiffe.io': 'true',
      };
    }
    this.#headers = headers;
    this.#connectOptions = { createConnection: () => netConnect(this.#socket), settings: { enablePush: false } };
    this.#timer = setTimeout(() => this.#onDeadline(), deadlineMs);
    // Armed once here and re-armed per call; when it fires with no call in flight it does nothing.
    this.#timer.unref();
  }

  #acquire(): http2.ClientHttp2Session {
    const s = this.#session;
    if (s && !s.closed && !s.destroyed) return s;
    this.channelsOpened++;
    const session = http2.connect(AUTHORITY, this.#connectOptions);
    // Connection errors reach the call through its stream; the session's own event needs a
    // listener or it would crash the worker.
    session.on('error', noop);
    this.#session = this.#mode === 'per-call' ? null : session;
    return session;
  }

  /**
   * Makes one call of `method` and reports the method actually called: ValidateJWTSVID needs a
   * token first, so without a fresh one it becomes a FetchJWTSVID that obtains it.
   */
  call(method: LoadMethod, done: CallDone): LoadMethod {
    if (method === 'ValidateJWTSVID' && (this.#token === null || Date.now() - this.#tokenAt > TOKEN_MAX_AGE_MS)) {
      method = 'FetchJWTSVID';
    }
    const streaming = STREAMING.has(method);
    const body = streaming ? this.#emptyFrame : method === 'ValidateJWTSVID' ? this.#validateFrame! : this.#jwtFrame;
    const session = this.#acquire();
    let stream: http2.ClientHttp2Stream;
    try {
      stream = session.request(this.#headers[method]);
    } catch (err) {
      // A session that went away between the check and the request (GOAWAY received).
      this.#dropSession(session);
      const e = err as Error;
      setImmediate(() => done(UNAVAILABLE, e.message, null));
      return method;
    }
    const call = new Call(this, session, stream, streaming, method === 'FetchJWTSVID' && this.#needToken, done);
    this.#current = call;
    this.#timer.refresh();
    // Shared listeners that find the call on the stream: no closures allocated per call.
    (stream as TaggedStream)[kCall] = call;
    stream.on('response', onStreamResponse);
    stream.on('data', onStreamData);
    stream.on('trailers', onStreamTrailers);
    stream.on('error', onStreamError);
    stream.on('close', onStreamClose);
    stream.end(body);
    return method;
  }

  /** @internal */
  onHeaders(call: Call, headers: http2.IncomingHttpHeaders): void {
    const status = Number(headers[':status']);
    if (headers['grpc-status'] !== undefined) {
      // Trailers-Only: the status comes with the headers and nothing follows.
      this.onStatus(call, headers);
    } else if (status !== 200) {
      call.httpCode = codeForHttpStatus(status);
      call.httpDetails = `Received HTTP status code ${status}`;
    } else if (!String(headers['content-type'] ?? '').startsWith('application/grpc')) {
      call.httpCode = UNKNOWN;
      call.httpDetails = `Invalid content-type ${String(headers['content-type'])}`;
    }
  }

  /** @internal */
  onStatus(call: Call, fields: http2.IncomingHttpHeaders): void {
    if (call.code !== -1) return;
    const raw = fields['grpc-status'];
    const code = raw === undefined ? NaN : Number(raw);
    if (Number.isInteger(code) && code >= 0) {
      call.code = code;
      call.details = decodeGrpcMessage(fields['grpc-message']);
    } else if (call.httpCode !== -1) {
      call.code = call.httpCode;
      call.details = call.httpDetails;
    } else {
      call.code = UNKNOWN;
      call.details = raw === undefined ? 'No status received' : `Invalid grpc-status ${String(raw)}`;
    }
  }

  /** Reassembles length-prefixed messages; a stream's first message settles it. */
  /** @internal */
  onData(call: Call, chunk: Buffer): void {
    if (call.settled) return;
    let buf = call.pending ? Buffer.concat([call.pending, chunk]) : chunk;
    call.pending = null;
    while (buf.length >= 5) {
      const len = buf.readUInt32BE(1);
      if (buf.length < 5 + len) break;
      if (buf[0] !== 0) {
        // No grpc-accept-encoding was sent, so a compressed message is a protocol error.
        call.code = INTERNAL;
        call.details = 'Received compressed message but no grpc-encoding was negotiated';
        call.stream.close(NGHTTP2_CANCEL);
        return;
      }
      call.messages++;
      if (call.messages === 1) call.message = buf.subarray(5, 5 + len);
      buf = buf.subarray(5 + len);
      if (call.streaming) {
        // As SDKs do when they have what they wanted: cancel the stream.
        call.stream.close(NGHTTP2_CANCEL);
        this.settle(call, OK, '', null);
        return;
      }
    }
    if (buf.length > 0) call.pending = buf;
  }

  /** @internal */
  onClose(call: Call): void {
    if (call.settled) return;
    let code = call.code;
    let details = call.details;
    if (code === -1) {
      if (call.httpCode !== -1) {
        code = call.httpCode;
        details = call.httpDetails;
      } else if (call.error) {
        // Refused, reset or dropped connections: grpc-js says UNAVAILABLE for all of them.
        code = UNAVAILABLE;
        const cause = (call.error as { cause?: unknown }).cause;
        details = cause instanceof Error ? cause.message : call.error.message;
      } else if (call.session.destroyed || call.session.closed || call.stream.rstCode === undefined || call.stream.rstCode === NGHTTP2_NO_ERROR) {
        // The connection went away under the stream (node then reports its streams as cancelled).
        code = UNAVAILABLE;
        details = 'Connection dropped';
      } else {
        code = codeForRstStream(call.stream.rstCode);
        details = `Received RST_STREAM with code ${call.stream.rstCode}`;
      }
    }
    if (code === OK) details = '';
    if (code === OK && !call.streaming) {
      if (call.messages === 0) {
        code = UNIMPLEMENTED;
        details = 'No message received';
      } else if (call.messages > 1) {
        code = UNIMPLEMENTED;
        details = 'Too many responses received';
      } else if (call.wantToken) {
        this.#keepToken(call.message!);
      }
    }
    this.settle(call, code, details, code === OK ? call.message : null);
  }

  #onDeadline(): void {
    const call = this.#current;
    if (!call || call.settled) return;
    call.deadlineHit = true;
    // The client enforces its deadline itself: the server may never answer.
    if (!call.stream.destroyed) call.stream.close(NGHTTP2_CANCEL);
    this.settle(call, DEADLINE_EXCEEDED, 'Deadline exceeded', null);
  }

  /** @internal */
  settle(call: Call, code: number, details: string, response: Buffer | null): void {
    if (call.settled) return;
    call.settled = true;
    if (this.#current === call) this.#current = null;
    const session = call.session;
    if (this.#mode === 'per-call') {
      // The connection ends with the call, as when a forked caller exits: the socket goes at once.
      // Only a stream cancelled after its first message is still open; close() lets its RST_STREAM
      // out first and then ends the connection.
      if (call.streaming && code === OK) session.close();
      else session.destroy();
    } else if (code !== OK && this.#mode === 'per-retry') {
      // per-retry reconnects after any error; per-worker keeps its connection (a broken one is
      // replaced by #acquire).
      this.#dropSession(session);
    }
    call.done(code, details, response);
  }

  #dropSession(session: http2.ClientHttp2Session): void {
    if (this.#session === session) this.#session = null;
    if (!session.destroyed) session.destroy();
  }

  #keepToken(response: Buffer): void {
    const token = decodeFirstJwtSvid(response);
    if (!token) return;
    this.#token = token;
    this.#tokenAt = Date.now();
    this.#validateFrame = frameMessage(encodeValidateRequest(this.#audience, token));
  }

  close(): void {
    const s = this.#session;
    this.#session = null;
    s?.destroy();
    clearTimeout(this.#timer);
  }
}

function noop(): void {}

const kCall = Symbol('attestorm.call');
type TaggedStream = http2.ClientHttp2Stream & { [kCall]: Call };

function onStreamResponse(this: TaggedStream, headers: http2.IncomingHttpHeaders): void {
  this[kCall].owner.onHeaders(this[kCall], headers);
}
function onStreamData(this: TaggedStream, chunk: Buffer): void {
  this[kCall].owner.onData(this[kCall], chunk);
}
function onStreamTrailers(this: TaggedStream, trailers: http2.IncomingHttpHeaders): void {
  this[kCall].owner.onStatus(this[kCall], trailers);
}
function onStreamError(this: TaggedStream, err: Error): void {
  this[kCall].error ??= err;
}
function onStreamClose(this: TaggedStream): void {
  this[kCall].owner.onClose(this[kCall]);
}
