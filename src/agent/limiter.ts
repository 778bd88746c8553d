// The Workload API rate limiter: a token bucket per (method, key), rate = burst = the configured
// integer per second, non-blocking, kept in a two-generation map so memory follows active callers.
import { ConfigError } from '../errors.js';
import type { LimitMethodKey, RateLimiter } from './types.js';

export interface RateLimiterOptions {
  /** A key unused for two of these intervals is dropped. Default 60 s, as in SPIRE. */
  gcIntervalMs?: number;
  /** Monotonic milliseconds; injected by tests. Default performance.now. */
  now?: () => number;
}

// Bucket state lives in one Float64Array per method (two numbers per live key) and the maps hold
// only slot numbers (small integers, stored unboxed): a known key costs no allocation per call and
// about half the memory of a Map of bucket objects, which matters at 100,000 callers.
const MILLI = 0; // tokens × 1000: with millisecond clocks refill is integer arithmetic, no float drift
const AT = 1; // when MILLI was last brought up to date (ms, same clock as now())
const INITIAL_SLOTS = 64;

class MethodBuckets {
  /** Tokens per second and bucket capacity; 0 = unlimited. */
  readonly limit: number;
  /** Bucket capacity in milli-tokens (limit × 1000). */
  readonly capacity: number;
  current = new Map<string, number>();
  previous = new Map<string, number>();
  state = new Float64Array(INITIAL_SLOTS * 2);
  /** Slots released by GC, reused before new ones. */
  free: number[] = [];
  /** Slots ever handed out since the last reset/compaction. */
  used = 0;

  constructor(limit: number) {
    this.limit = limit;
    this.capacity = limit * 1000;
  }

  alloc(): number {
    if (this.free.length > 0) return this.free.pop()!;
    if (this.used * 2 === this.state.length) {
      const bigger = new Float64Array(this.state.length * 2);
      bigger.set(this.state);
      this.state = bigger;
    }
    return this.used++;
  }

  /** One GC boundary: previous is dropped (its slots freed), current becomes previous. */
  demote(): void {
    for (const slot of this.previous.values()) this.free.push(slot);
    this.previous = this.current;
    this.current = new Map();
    const live = this.previous.size;
    // After a storm the slab would stay at its peak; compact once it is mostly free so memory
    // follows the keys that are still live.
    if (this.used > INITIAL_SLOTS && live * 4 < this.used) this.compact(live);
  }

  /** Two or more boundaries passed: nothing is live any more. */
  reset(): void {
    this.current = new Map();
    this.previous = new Map();
    this.state = new Float64Array(INITIAL_SLOTS * 2);
    this.free = [];
    this.used = 0;
  }

  private compact(live: number): void {
    const next = new Float64Array(Math.max(INITIAL_SLOTS, 2 ** Math.ceil(Math.log2(live * 2))) * 2);
    let n = 0;
    for (const [key, slot] of this.previous) {
      next[n * 2 + MILLI] = this.state[slot * 2 + MILLI]!;
      next[n * 2 + AT] = this.state[slot * 2 + AT]!;
      this.previous.set(key, n++); // updating a present key keeps Map iteration valid
    }
    this.state = next;
    this.free = [];
    this.used = n;
  }
}

const METHOD_KEYS: readonly LimitMethodKey[] = [
  'fetch_x509_svid',
  'fetch_jwt_svid',
  'fetch_x509_bundles',
  'fetch_jwt_bundles',
  'validate_jwt_svid',
];

class TwoGenerationLimiter implements RateLimiter {
  private readonly methods: Record<LimitMethodKey, MethodBuckets>;
  private readonly gcIntervalMs: number;
  private readonly now: () => number;
  private rotatedAt: number;

  constructor(limits: Record<LimitMethodKey, number>, gcIntervalMs: number, now: () => number) {
    this.gcIntervalMs = gcIntervalMs;
    this.now = now;
    this.rotatedAt = now();
    const methods = {} as Record<LimitMethodKey, MethodBuckets>;
    for (const m of METHOD_KEYS) methods[m] = new MethodBuckets(limits[m] ?? 0);
    this.methods = methods;
  }

  allow(method: LimitMethodKey, key: string): boolean {
    const m = this.methods[method];
    if (m === undefined || m.limit === 0) return true;
    const now = this.now();
    if (now - this.rotatedAt >= this.gcIntervalMs) this.rotate(now);
    let slot = m.current.get(key);
    if (slot === undefined) {
      slot = m.previous.get(key);
      if (slot === undefined) {
        // A new key starts with a full bucket, like a fresh x/time/rate limiter.
        slot = m.alloc();
        m.state[slot * 2 + MILLI] = m.capacity;
        m.state[slot * 2 + AT] = now;
      } else {
        m.previous.delete(key);
      }
      m.current.set(key, slot);
    }
    const state = m.state;
    const i = slot * 2;
    // limit tokens per 1000 ms = limit milli-tokens per ms.
    let milli = state[i + MILLI]! + (now - state[i + AT]!) * m.limit;
    if (milli > m.capacity) milli = m.capacity;
    state[i + AT] = now;
    if (milli >= 1000) {
      state[i + MILLI] = milli - 1000;
      return true;
    }
    state[i + MILLI] = milli;
    return false;
  }

  size(): number {
    let n = 0;
    for (const m of METHOD_KEYS) {
      const b = this.methods[m];
      n += b.current.size + b.previous.size;
    }
    return n;
  }

  /**
   * Lazy stand-in for SPIRE's GC ticker: behaves as if a rotation had happened at every interval
   * boundary since the last one. One boundary: current becomes previous. Two or more: everything
   * was idle for at least one full interval after its generation was demoted, so all is dropped.
   */
  private rotate(now: number): void {
    const elapsed = Math.floor((now - this.rotatedAt) / this.gcIntervalMs);
    for (const name of METHOD_KEYS) {
      const m = this.methods[name];
      if (m.limit === 0) continue;
      if (elapsed === 1) m.demote();
      else m.reset();
    }
    this.rotatedAt += elapsed * this.gcIntervalMs;
  }
}

/**
 * Creates the limiter. `limits` are per-second integers per method (0 = unlimited). Throws
 * ConfigError for a negative or fractional limit or a non-positive GC interval.
 */
export function createRateLimiter(
  limits: Record<LimitMethodKey, number>,
  opts: RateLimiterOptions = {},
): RateLimiter {
  const problems: string[] = [];
  for (const m of METHOD_KEYS) {
    const v = limits[m];
    if (v !== undefined && !(Number.isInteger(v) && v >= 0)) {
      problems.push(`rateLimit.limits.${m} must be a non-negative integer (calls per second), got ${String(v)}`);
    }
  }
  const gcIntervalMs = opts.gcIntervalMs ?? 60_000;
  if (!(Number.isFinite(gcIntervalMs) && gcIntervalMs > 0)) {
    problems.push(`rateLimit.gcInterval must be a positive duration, got ${String(gcIntervalMs)} ms`);
  }
  if (problems.length) throw new ConfigError(problems);
  return new TwoGenerationLimiter(limits, gcIntervalMs, opts.now ?? (() => performance.now()));
}
