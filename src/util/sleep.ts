// Waiting a while, cut short by an abort. An aborted wait simply ends: every caller polls a
// condition and checks its signal after the wait, so an abort is not an error to them.
import { setTimeout as delay } from 'node:timers/promises';

/**
 * Resolves after `ms`, or as soon as `signal` aborts (at once if it already has); never rejects on
 * an abort. The platform's timer removes its abort listener when it fires, so a signal shared by a
 * long poll does not collect one listener per wait.
 */
export async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  try {
    await delay(ms, undefined, { signal });
  } catch (err) {
    if (!signal?.aborted) throw err;
  }
}

/**
 * `p`, or a rejection naming `what` after `ms`: for requests that carry no deadline of their own (a
 * cluster's API calls, which wait on a dead peer for minutes). The request itself is left to end.
 */
export async function withinMs<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms / 1000} s`)), ms);
    timer.unref();
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}
