// The Workload API rate limiter: a token bucket per (method, key), rate = burst = the configured
// integer per second, non-blocking, kept in a two-generation map so memory follows active callers.
import { ConfigError } from '../errors.js';
import type { LimitMethodKey, RateLimiter } from './types.js';

export interface RateLimiterOptions {
  /** A key unused for two of these intervals is dropped. Default 60 s, as in SPIRE. */
  gcIntervalMs?: number;
  /** Monotonic milliseconds; injected by tests. Default: coarseClock (performance.now per read, a timer's reading while busy). */
  now?: () => number;
  /** Refresh period of the default clock's timer in ms, while busy (default 5). */
  clockTickMs?: number;
}

// Bucket state lives in one Float64Array per method (two numbers per live key) and one Map per
// method interns each key to its slot number (a small integer, stored unboxed): a known key costs
// one Map lookup and no allocation per call, about half the memory of a Map of bucket objects.
// The two generations are read from each bucket's last-use time rather than kept as two Maps: a
// hit never moves a key between maps, and a rotation sweeps out the keys last used before the
// previous interval began — the keys SPIRE's previous map would drop — at O(live keys) once per
// GC interval instead of work on every call.
const MILLI = 0; // tokens × 1000: with millisecond clocks refill is integer arithmetic, no float drift
const AT = 1; // when MILLI was last brought up to date = the key's last use (ms, same clock as now())
const STRIDE = 2;
const INITIAL_SLOTS = 64;

class MethodBuckets {
  /** Tokens per second and bucket capacity; 0 = unlimited. */
  readonly limit: number;
  /** Bucket capacity in milli-tokens (limit × 1000). */
  readonly capacity: number;
  slots = new Map<string, number>();
  state = new Float64Array(INITIAL_SLOTS * STRIDE);
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
    if (this.used * STRIDE === this.state.length) {
      const bigger = new Float64Array(this.state.length * 2);
      bigger.set(this.state);
      this.state = bigger;
    }
    return this.used++;
  }

  /** Drops every key last used before `oldest` (ms) and frees its slot. */
  sweep(oldest: number): void {
    const state = this.state;
    for (const [key, slot] of this.slots) {
      if (state[slot * STRIDE + AT]! < oldest) {
        this.slots.delete(key); // deleting the current entry keeps Map iteration valid
        this.free.push(slot);
      }
    }
    const live = this.slots.size;
    if (live === 0) this.reset();
    // After a storm the slab would stay at its peak; compact once it is mostly free so memory
    // follows the keys that are still live.
    else if (this.used > INITIAL_SLOTS && live * 4 < this.used) this.compact(live);
  }

  private reset(): void {
    this.slots = new Map();
    this.state = new Float64Array(INITIAL_SLOTS * STRIDE);
    this.free = [];
    this.used = 0;
  }

  private compact(live: number): void {
    const next = new Float64Array(Math.max(INITIAL_SLOTS, 2 ** Math.ceil(Math.log2(live * 2))) * STRIDE);
    let n = 0;
    for (const [key, slot] of this.slots) {
      next.set(this.state.subarray(slot * STRIDE, slot * STRIDE + STRIDE), n * STRIDE);
      this.slots.set(key, n++); // updating a present key keeps Map iteration valid
    }
    this.state = next;
    this.free = [];
    this.used = n;
  }
}

const METHOD_KEYS: readonly LimitMethodKey[] = ['fetch_x509_svid', 'fetch_jwt_svid', 'fetch_x509_bundles', 'fetch_jwt_bundles', 'validate_jwt_svid'];

/**
 * The default clock: performance.now() on each read while calls are few, and a reading refreshed by
 * a timer every `tickMs` while they are many. Each agent call is its own event-loop turn, so a
 * per-turn cache still paid one performance.now() (about 60 ns here, a quarter of allow() at
 * 100,000 keys) per call. A timer is not free either: measured as an upper bound, one costs tens of
 * µs of CPU per wake-up on this machine, more than per-read clock calls at a few thousand calls per
 * second. So the timer runs only while at least `busyReads` reads arrive within one tick (the loop
 * is awake anyway then, and the tick is shared by all of them), and stops at the first tick with
 * fewer than half that. A stale reading credits refill at most one tick late and loses no tokens:
 * the next reading counts from the same instant. The timer is unref'd.
 */
export function coarseClock(tickMs = DEFAULT_CLOCK_TICK_MS, busyReads = DEFAULT_CLOCK_BUSY_READS): { now: () => number; ticking: () => boolean } {
  let cached = 0;
  let timer: ReturnType<typeof setInterval> | null = null;
  // Timer mode: reads since the last tick. Per-read mode: reads in the window starting at windowStart.
  let reads = 0;
  let windowStart = -Infinity;
  const tick = () => {
    if (reads * 2 < busyReads) {
      clearInterval(timer!);
      timer = null;
      windowStart = -Infinity;
      return;
    }
    reads = 0;
    cached = performance.now();
  };
  return {
    now() {
      if (timer !== null) {
        reads++;
        return cached;
      }
      const t = performance.now();
      if (t - windowStart >= tickMs) {
        windowStart = t;
        reads = 0;
      }
      if (++reads >= busyReads) {
        cached = t;
        reads = 0;
        timer = setInterval(tick, tickMs);
        timer.unref();
      }
      return t;
    },
    ticking: () => timer !== null,
  };
}

/** Refresh period of the default clock while busy: the most refill can be credited late. */
export const DEFAULT_CLOCK_TICK_MS = 5;
/** Reads within one tick that switch the default clock to its timer (6,400 reads/s at 5 ms). */
export const DEFAULT_CLOCK_BUSY_READS = 32;

class TwoGenerationLimiter implements RateLimiter {
  private readonly methods: Record<LimitMethodKey, MethodBuckets>;
  private readonly gcIntervalMs: number;
  private readonly now: () => number;
  /** Start of the current GC interval (ms); boundaries stay aligned to the creation time. */
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
    let state = m.state;
    let slot = m.slots.get(key);
    if (slot === undefined) {
      // A new key starts with a full bucket, like a fresh x/time/rate limiter.
      slot = m.alloc();
      state = m.state;
      m.slots.set(key, slot);
      const j = slot * STRIDE;
      state[j + MILLI] = m.capacity;
      state[j + AT] = now;
    }
    const i = slot * STRIDE;
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
    for (const m of METHOD_KEYS) n += this.methods[m].slots.size;
    return n;
  }

  /**
   * Lazy stand-in for SPIRE's GC ticker: behaves as if a rotation had happened at every interval
   * boundary since the last one. A key survives while it was used in the current interval or the
   * one before (SPIRE's current and previous maps); keys idle since before that are dropped.
   */
  private rotate(now: number): void {
    const elapsed = Math.floor((now - this.rotatedAt) / this.gcIntervalMs);
    this.rotatedAt += elapsed * this.gcIntervalMs;
    const oldest = this.rotatedAt - this.gcIntervalMs;
    for (const name of METHOD_KEYS) {
      const m = this.methods[name];
      if (m.limit !== 0) m.sweep(oldest);
    }
  }
}

/**
 * Creates the limiter. `limits` are per-second integers per method (0 = unlimited). Throws
 * ConfigError for a negative or fractional limit or a non-positive GC interval.
 */
export function createRateLimiter(limits: Record<LimitMethodKey, number>, opts: RateLimiterOptions = {}): RateLimiter {
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
  const tickMs = opts.clockTickMs ?? DEFAULT_CLOCK_TICK_MS;
  if (!(Number.isFinite(tickMs) && tickMs >= 1)) problems.push(`rateLimit.clockTick must be at least 1 ms, got ${String(tickMs)} ms`);
  if (problems.length) throw new ConfigError(problems);
  return new TwoGenerationLimiter(limits, gcIntervalMs, opts.now ?? coarseClock(tickMs).now);
}
