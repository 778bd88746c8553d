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

// One mutable object per live key: the call path updates it in place, so allow() allocates
// nothing once a key is known.
interface Bucket {
  /** Tokens × 1000: with millisecond clocks refill is integer arithmetic, so no float drift. */
  milli: number;
  /** When tokens was last brought up to date (ms, same clock as now()). */
  at: number;
}

interface MethodBuckets {
  /** Tokens per second and bucket capacity; 0 = unlimited. */
  readonly limit: number;
  /** Bucket capacity in milli-tokens (limit × 1000). */
  readonly capacity: number;
  current: Map<string, Bucket>;
  previous: Map<string, Bucket>;
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
    for (const m of METHOD_KEYS) {
      const limit = limits[m] ?? 0;
      methods[m] = { limit, capacity: limit * 1000, current: new Map(), previous: new Map() };
    }
    this.methods = methods;
  }

  allow(method: LimitMethodKey, key: string): boolean {
    const m = this.methods[method];
    if (m === undefined || m.limit === 0) return true;
    const now = this.now();
    if (now - this.rotatedAt >= this.gcIntervalMs) this.rotate(now);
    let b = m.current.get(key);
    if (b === undefined) {
      b = m.previous.get(key);
      if (b === undefined) {
        // A new key starts with a full bucket, like a fresh x/time/rate limiter.
        b = { milli: m.capacity, at: now };
      } else {
        m.previous.delete(key);
      }
      m.current.set(key, b);
    }
    // limit tokens per 1000 ms = limit milli-tokens per ms.
    let milli = b.milli + (now - b.at) * m.limit;
    if (milli > m.capacity) milli = m.capacity;
    b.at = now;
    if (milli >= 1000) {
      b.milli = milli - 1000;
      return true;
    }
    b.milli = milli;
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
      if (elapsed === 1) {
        m.previous = m.current;
        m.current = new Map();
      } else {
        m.previous = new Map();
        m.current = new Map();
      }
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
