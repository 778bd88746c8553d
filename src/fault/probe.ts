// "Does the agent answer?": a real Workload API call (ValidateJWTSVID of a token that is not one) on a
// fresh connection, repeated until any answer comes back from the agent. A status the agent produced
// (InvalidArgument here, or even a rate-limit rejection) counts; transport failures do not.
import * as grpc from '@grpc/grpc-js';
import { SECURITY_HEADER, workloadProto } from '../proto/index.js';

/** Statuses grpc-js produces itself when nothing answered (refused, reset, no reply in time). */
const NO_ANSWER = new Set<number>([grpc.status.UNAVAILABLE, grpc.status.DEADLINE_EXCEEDED, grpc.status.CANCELLED]);

export interface ProbeOptions {
  /** Deadline of each attempt: an agent that is frozen or swamped fails it. */
  deadlineMs?: number;
  /** Pause between attempts. */
  intervalMs?: number;
}

/** One attempt: true when the agent answered within the deadline. */
export function probeAgentOnce(socket: string, deadlineMs = 2000, signal?: AbortSignal): Promise<boolean> {
  const Client = workloadProto().SpiffeWorkloadAPI;
  // A fresh channel each time: a reused one would sit in grpc-js's reconnect back-off after a restart.
  const client = new Client(`unix:${socket}`, grpc.credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 });
  const md = new grpc.Metadata();
  md.set(SECURITY_HEADER, 'true');
  return new Promise<boolean>((resolve) => {
    const cancel = () => call.cancel();
    const call = client.ValidateJWTSVID({ audience: 'attestorm-probe', svid: 'not-a-jwt' }, md, { deadline: Date.now() + deadlineMs }, (err) => {
      signal?.removeEventListener('abort', cancel);
      client.close();
      if (!err) return resolve(true);
      // A rate limiter answering Unavailable is still the agent answering.
      resolve(!NO_ANSWER.has(err.code) || /rate limit/i.test(err.details ?? ''));
    });
    signal?.addEventListener('abort', cancel, { once: true });
  });
}

/** Resolves once the agent at `socket` answers; rejects with the signal's reason when it aborts first. */
export async function waitAgentAnswers(socket: string, signal: AbortSignal, opts: ProbeOptions = {}): Promise<void> {
  const { deadlineMs = 2000, intervalMs = 100 } = opts;
  for (;;) {
    signal.throwIfAborted();
    if (await probeAgentOnce(socket, deadlineMs, signal)) return;
    signal.throwIfAborted();
    await new Promise<void>((resolve) => {
      const t = setTimeout(done, intervalMs);
      function done() {
        clearTimeout(t);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    });
  }
}
