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
