// The pure decisions of a worker's loop — when to send, how long to back off, what an answer
// counts as — kept free of I/O so they can be tested with a fake clock.
import { GRPC_STATUS_NAMES } from '../../util/grpc-status.js';
import type { Outcome } from './messages.js';

/** A status code as a name for the byCode counters. */
export function statusName(code: number): string {
  return GRPC_STATUS_NAMES[code] ?? `CODE_${code}`;
}

const UNAVAILABLE = 14;
const RESOURCE_EXHAUSTED = 8;
const DEADLINE_EXCEEDED = 4;

/**
 * Both limiter designs reject with "rate limit exceeded…" details — SPIRE's post-attestation one
 * with UNAVAILABLE, the pre-attestation proposal with RESOURCE_EXHAUSTED — so the details, not the
 * code alone, tell a rejection from an agent that is merely down.
 */
export function classify(code: number, details: string): Outcome {
  if (code === 0) return 'ok';
  if ((code === UNAVAILABLE || code === RESOURCE_EXHAUSTED) && details.startsWith('rate limit exceeded')) return 'rateLimited';
  if (code === DEADLINE_EXCEEDED) return 'deadlineExceeded';
  return 'error';
}

export const BACKOFF_BASE_MS = 100;
export const BACKOFF_CAP_MS = 5000;

/** Exponential backoff with full jitter: uniform in [0, min(cap, base·2^(failures-1))). */
export function backoffDelayMs(consecutiveFailures: number, random: () => number = Math.random): number {
  const exp = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, Math.min(consecutiveFailures - 1, 30)));
  return random() * exp;
}

/**
 * Open-loop schedule: call i is intended at start + i/rate. Latency is measured from the intended
 * time, not the actual send, so a slow answer that delays later sends is charged to those sends as
 * well (coordinated-omission correction). Closed loop has no schedule: each call is intended when
 * it is sent.
 */
export class Pacer {
  readonly #intervalMs: number | null;
  #next: number;

  constructor(ratePerSec: number | null, startMs: number) {
    this.#intervalMs = ratePerSec ? 1000 / ratePerSec : null;
    this.#next = startMs;
  }

  get openLoop(): boolean {
    return this.#intervalMs !== null;
  }

  /** Intended send time of the next call; `now` for a closed loop. */
  next(now: number): number {
    if (this.#intervalMs === null) return now;
    const t = this.#next;
    this.#next += this.#intervalMs;
    return t;
  }

  /**
   * A deliberate pause (backoff) is the client choosing not to send: slots that fall inside it are
   * dropped rather than charged as omitted calls.
   */
  skipUntil(t: number): void {
    if (this.#intervalMs === null) return;
    while (this.#next < t) this.#next += this.#intervalMs;
  }
}

/** Latency to record, in whole microseconds (at least 1 so HDR keeps it). */
export function latencyUs(intendedAt: number, doneAt: number): number {
  return Math.max(1, Math.round((doneAt - intendedAt) * 1000));
}

/** Picks a method by weight; `random` in [0,1). */
export function makePicker<T>(weighted: Array<[T, number]>): (random: number) => T {
  if (weighted.length === 0) throw new Error('no methods');
  if (weighted.length === 1) {
    const only = weighted[0]![0];
    return () => only;
  }
  const total = weighted.reduce((s, [, w]) => s + w, 0);
  const cumulative: number[] = [];
  let acc = 0;
  for (const [, w] of weighted) cumulative.push((acc += w / total));
  return (random) => {
    for (let i = 0; i < cumulative.length; i++) if (random < cumulative[i]!) return weighted[i]![0];
    return weighted[weighted.length - 1]![0];
  };
}
