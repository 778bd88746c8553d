// The grpc-js transport: one Workload API call at a time over the configured connection mode.
// Requests are pre-encoded buffers passed through identity (de)serializers, so the hot path builds
// no protobuf objects.
import * as grpc from '@grpc/grpc-js';
import type { ConnectionMode, LoadMethod } from './messages.js';
import type { CallDone, Transport } from './transport.js';
import { EMPTY_REQUEST, METHOD_PATHS, STREAMING, decodeFirstJwtSvid, encodeJwtSvidRequest, encodeValidateRequest } from './wire.js';

export type { CallDone } from './transport.js';

const passThrough = (b: Buffer): Buffer => b;

// A local subchannel pool makes close() tear the connection down at once; with the global pool
// grpc-js would keep the subchannel (and its socket) for reuse by the next channel, and per-call
// mode would silently become per-worker. Channelz and retries are off: per-call channels would
// otherwise pay for registration and retry buffers on every call.
const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.use_local_subchannel_pool': 1,
  'grpc.enable_channelz': 0,
  'grpc.enable_retries': 0,
};

// Tokens are refreshed well inside the default 5-minute JWT-SVID TTL.
const TOKEN_MAX_AGE_MS = 60_000;

export class Caller implements Transport {
  readonly #target: string;
  readonly #mode: ConnectionMode;
  readonly #deadlineMs: number;
  readonly #audience: string;
  readonly #needToken: boolean;
  readonly #creds = grpc.credentials.createInsecure();
  readonly #metadata = new grpc.Metadata();
  readonly #jwtRequest: Buffer;
  #client: grpc.Client | null = null;
  #token: string | null = null;
  #tokenAt = 0;
  #validateRequest: Buffer | null = null;
  /** Channels opened so far (per-call: one per call). */
  channelsOpened = 0;

  constructor(socket: string, mode: ConnectionMode, deadlineMs: number, audience: string, needToken: boolean) {
    this.#target = `unix:${socket}`;
    this.#mode = mode;
    this.#deadlineMs = deadlineMs;
    this.#audience = audience;
    this.#needToken = needToken;
    this.#metadata.set('workload.spiffe.io', 'true');
    this.#jwtRequest = encodeJwtSvidRequest(audience);
  }

  #acquire(): grpc.Client {
    if (this.#client) return this.#client;
    this.channelsOpened++;
    const client = new grpc.Client(this.#target, this.#creds, CHANNEL_OPTIONS);
    if (this.#mode !== 'per-call') this.#client = client;
    return client;
  }

  #release(client: grpc.Client, failed: boolean): void {
    if (this.#mode === 'per-call') {
      client.close();
    } else if (this.#mode === 'per-retry' && failed) {
      client.close();
      this.#client = null;
    }
  }

  /**
   * Makes one call of `method` and reports the method actually called: ValidateJWTSVID needs a
   * token first, so without a fresh one it becomes a FetchJWTSVID that obtains it.
   */
  call(method: LoadMethod, done: CallDone): LoadMethod {
    if (method === 'ValidateJWTSVID' && (this.#token === null || Date.now() - this.#tokenAt > TOKEN_MAX_AGE_MS)) {
      method = 'FetchJWTSVID';
    }
    const client = this.#acquire();
    const deadline = Date.now() + this.#deadlineMs;
    const finish: CallDone = (code, details, response) => {
      this.#release(client, code !== 0);
      done(code, details, response);
    };
    if (STREAMING.has(method)) {
      this.#firstMessage(client, method, deadline, finish);
    } else {
      const request = method === 'ValidateJWTSVID' ? this.#validateRequest! : this.#jwtRequest;
      const wantToken = method === 'FetchJWTSVID' && this.#needToken;
      client.makeUnaryRequest(METHOD_PATHS[method], passThrough, passThrough, request, this.#metadata, { deadline }, (err, response) => {
        if (err) return finish(err.code, err.details ?? '', null);
        if (wantToken && response) this.#keepToken(response);
        finish(0, '', response ?? null);
      });
    }
    return method;
  }

  #keepToken(response: Buffer): void {
    const token = decodeFirstJwtSvid(response);
    if (!token) return;
    this.#token = token;
    this.#tokenAt = Date.now();
    this.#validateRequest = encodeValidateRequest(this.#audience, token);
  }

  /** Opens a server stream, waits for its first message, then cancels it (as SDKs do on close). */
  #firstMessage(client: grpc.Client, method: LoadMethod, deadline: number, finish: CallDone): void {
    let settled = false;
    const stream = client.makeServerStreamRequest(METHOD_PATHS[method], passThrough, passThrough, EMPTY_REQUEST, this.#metadata, { deadline });
    stream.on('data', () => {
      if (settled) return;
      settled = true;
      stream.cancel();
      finish(0, '', null);
    });
    stream.on('error', (err: grpc.ServiceError) => {
      if (settled) return;
      settled = true;
      finish(err.code, err.details ?? '', null);
    });
    stream.on('status', (s: grpc.StatusObject) => {
      // A stream that ends cleanly before any message still answered: counted as OK.
      if (settled) return;
      settled = true;
      finish(s.code, s.details, null);
    });
  }

  close(): void {
    this.#client?.close();
    this.#client = null;
  }
}
