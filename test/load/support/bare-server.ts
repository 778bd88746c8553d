// A bare Workload API server for tests and benchmarks: grpc-js answering FetchJWTSVID with a fixed
// JWT-SVID (after checking the security header and audience, with the real status codes), optionally
// behind a counting Unix-socket relay so tests can see how many connections clients really open.
import * as grpc from '@grpc/grpc-js';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer, type Server as NetServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function stringField(field: number, value: string): Buffer {
  const b = Buffer.from(value);
  if (b.length > 127) throw new Error('test helper encodes short strings only');
  return Buffer.concat([Buffer.from([(field << 3) | 2, b.length]), b]);
}

/** JWTSVIDResponse{ svids: [{ spiffe_id, svid }] }, encoded once. */
export const FIXED_JWT_RESPONSE = (() => {
  const svid = Buffer.concat([stringField(1, 'spiffe://example.org/storm'), stringField(2, 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJzIn0.c2ln')]);
  return Buffer.concat([Buffer.from([0x0a, svid.length]), svid]);
})();

export interface BareServer {
  /** The socket clients dial (the relay's when counting). */
  socket: string;
  dir: string;
  /** FetchJWTSVID calls answered, by status name. */
  calls: Record<string, number>;
  /** Connections accepted by the relay (counting mode only). */
  accepted: number;
  /** Connections currently open through the relay. */
  open: number;
  close(): Promise<void>;
}

export interface BareServerOptions {
  /** Put a counting relay in front of the gRPC server. */
  counting?: boolean;
  /** Answer every call with this status instead (e.g. 14 + "rate limit exceeded ..."). */
  reject?: { code: number; details: string };
  /** Delay every answer (ms). */
  delayMs?: number;
  /** Called for every connection the relay accepts (counting mode), e.g. to read SO_PEERCRED. */
  onAccept?: (socket: Socket) => void;
}

function firstAudience(req: Buffer): string {
  // JWTSVIDRequest field 1 (audience), short strings only.
  return req[0] === 0x0a ? req.toString('utf8', 2, 2 + req[1]!) : '';
}

export async function startBareServer(opts: BareServerOptions = {}): Promise<BareServer> {
  const dir = mkdtempSync(join(tmpdir(), 'attestorm-bare-'));
  const grpcSocket = join(dir, opts.counting ? 'inner.sock' : 'agent.sock');
  const calls: Record<string, number> = {};
  const count = (name: string) => (calls[name] = (calls[name] ?? 0) + 1);
  const server = new grpc.Server();
  const pass = (b: Buffer) => b;
  server.register<Buffer, Buffer>(
    '/SpiffeWorkloadAPI/FetchJWTSVID',
    (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) => {
      const answer = () => {
        if (call.metadata.get('workload.spiffe.io')[0] !== 'true') {
          count('INVALID_ARGUMENT');
          return cb({ code: grpc.status.INVALID_ARGUMENT, details: 'security header missing from request' });
        }
        if (!firstAudience(call.request)) {
          count('INVALID_ARGUMENT');
          return cb({ code: grpc.status.INVALID_ARGUMENT, details: 'audience must be specified' });
        }
        if (opts.reject) {
          count(grpc.status[opts.reject.code]!);
          return cb({ code: opts.reject.code, details: opts.reject.details });
        }
        count('OK');
        cb(null, FIXED_JWT_RESPONSE);
      };
      if (opts.delayMs) setTimeout(answer, opts.delayMs);
      else answer();
    },
    pass,
    pass,
    'unary',
  );
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix:${grpcSocket}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
  );
  const state: BareServer = {
    socket: grpcSocket,
    dir,
    calls,
    accepted: 0,
    open: 0,
    async close() {
      await new Promise<void>((resolve) => relay?.close(() => resolve()) ?? resolve());
      server.forceShutdown();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  let relay: NetServer | undefined;
  if (opts.counting) {
    state.socket = join(dir, 'agent.sock');
    relay = createServer((client) => {
      state.accepted++;
      state.open++;
      opts.onAccept?.(client);
      const upstream = createConnection(grpcSocket);
      client.pipe(upstream).pipe(client);
      let closed = false;
      const done = () => {
        if (closed) return;
        closed = true;
        state.open--;
        client.destroy();
        upstream.destroy();
      };
      client.on('close', done).on('error', done);
      upstream.on('close', done).on('error', done);
    });
    await new Promise<void>((resolve) => relay!.listen(state.socket, resolve));
  }
  return state;
}
