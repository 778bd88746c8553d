// Readiness by a real SVID fetch: a generator pod reports ready only once FetchJWTSVID succeeds on
// the agent's socket (for SPIRE: its registration entry has reached the agent, ~10 s after creation).
import * as grpc from '@grpc/grpc-js';
import { SECURITY_HEADER, workloadProto } from '../../proto/index.js';

/** One FetchJWTSVID on a fresh connection; resolves with null on success, else the status and message. */
export function fetchJwtSvidOnce(socket: string, audience: string, deadlineMs = 2000): Promise<string | null> {
  const Client = workloadProto().SpiffeWorkloadAPI;
  const client = new Client(`unix:${socket}`, grpc.credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 });
  const md = new grpc.Metadata();
  md.set(SECURITY_HEADER, 'true');
  return new Promise((resolve) => {
    client.FetchJWTSVID({ audience: [audience] }, md, { deadline: Date.now() + deadlineMs }, (err) => {
      client.close();
      resolve(err ? `${grpc.status[err.code] ?? err.code}: ${err.details}` : null);
    });
  });
}

/** Retries until a fetch succeeds or `timeoutMs` passes; returns the last failure, or null on success. */
export async function waitForSvid(
  socket: string,
  audience: string,
  opts: { timeoutMs: number; intervalMs?: number; stopped?: () => boolean },
): Promise<string | null> {
  const deadline = Date.now() + opts.timeoutMs;
  let last: string | null = 'no attempt';
  while (Date.now() < deadline && !opts.stopped?.()) {
    last = await fetchJwtSvidOnce(socket, audience);
    if (last === null) return null;
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 1000));
  }
  return last;
}
