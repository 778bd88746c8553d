// Cost of the rate limiter's allow() with few and with many live keys, and its memory per key.
// Run: node --expose-gc --import tsx bench/limiter.ts [--json]   (npm run bench runs it that way;
// without --expose-gc the memory figure is skipped). Human lines go to stdout, or to stderr when
// --json puts one JSON object on stdout.
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { coarseClock, createRateLimiter, DEFAULT_CLOCK_BUSY_READS, DEFAULT_CLOCK_TICK_MS, type LimitMethodKey } from '../src/agent/index.js';

const json = process.argv.includes('--json');
const say = (line: string) => (json ? process.stderr : process.stdout).write(`${line}\n`);
const gc = (globalThis as { gc?: () => void }).gc;

const LIMITS: Record<LimitMethodKey, number> = {
  fetch_x509_svid: 10,
  fetch_jwt_svid: 10,
  fetch_x509_bundles: 10,
  fetch_jwt_bundles: 10,
  validate_jwt_svid: 0,
};

// Keys shaped like the pod-uid strategy's ("pod:<uuid>"), made up front so the loop measures the
// limiter, not key construction.
function makeKeys(n: number): string[] {
  return Array.from({ length: n }, () => `pod:${randomUUID()}`);
}

/**
 * CPU time (user + system) of this process in ns: on a shared 2-core box wall time mostly measures
 * how long other processes held the core; CPU time only counts the cycles this loop spent.
 */
function cpuNs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1000;
}

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/**
 * Baseline: a bare Map<string, object>.get over the same keys in the same order. At 100,000 keys
 * both are dominated by cache misses, so the difference is what the limiter itself costs.
 */
function mapGetNs(keys: string[], calls: number, rounds: number): number {
  const m = new Map(keys.map((k) => [k, { n: 1 }]));
  const samples: number[] = [];
  let sink = 0;
  for (let r = 0; r < rounds + 1; r++) {
    let i = 0;
    const t0 = cpuNs();
    for (let c = 0; c < calls; c++) {
      sink += m.get(keys[i]!)!.n;
      if (++i === keys.length) i = 0;
    }
    if (r > 0) samples.push((cpuNs() - t0) / calls);
  }
  if (sink < 0) say('unreachable');
  return median(samples);
}

/** Median ns per allow() over `rounds` rounds of `calls` calls cycling through every key. */
function nsPerCall(
  keys: string[],
  calls: number,
  rounds = ROUNDS,
  now?: () => number,
): { median: number; min: number; allowed: number; size: number; mapGet: number } {
  const limiter = createRateLimiter(LIMITS, { gcIntervalMs: 60_000, now });
  // Every key live (a bucket exists) before timing; then warm up the JIT on the same loop.
  for (const k of keys) limiter.allow('fetch_jwt_svid', k);
  let allowed = 0;
  const loop = (n: number) => {
    let ok = 0;
    let i = 0;
    for (let c = 0; c < n; c++) {
      if (limiter.allow('fetch_jwt_svid', keys[i]!)) ok++;
      if (++i === keys.length) i = 0;
    }
    return ok;
  };
  loop(Math.min(calls, 1_000_000));
  const samples: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = cpuNs();
    allowed += loop(calls);
    samples.push((cpuNs() - t0) / calls);
  }
  return { median: median(samples), min: Math.min(...samples), allowed, size: limiter.size(), mapGet: mapGetNs(keys, calls, rounds) };
}

/**
 * allow() on the default coarse clock under heavy load: the calls are split into event-loop
 * turns (TURN calls each) so the clock's timer fires and refreshes the reading during the round.
 * CPU time covers everything the process did: the calls, the clock reads, the timer's ticks and the
 * turns themselves, which is what an agent under a storm pays.
 */
async function nsPerCallTicking(keys: string[], calls: number, rounds = ROUNDS): Promise<{ median: number; min: number; ticksPerRound: number }> {
  const limiter = createRateLimiter(LIMITS, { gcIntervalMs: 60_000 });
  for (const k of keys) limiter.allow('fetch_jwt_svid', k);
  let i = 0;
  let sink = 0;
  const loop = async (n: number) => {
    for (let done = 0; done < n;) {
      const end = Math.min(n, done + TURN);
      for (; done < end; done++) {
        if (limiter.allow('fetch_jwt_svid', keys[i]!)) sink++;
        if (++i === keys.length) i = 0;
      }
      await nextTurn();
    }
  };
  await loop(Math.min(calls, 1_000_000));
  const samples: number[] = [];
  let wallMs = 0;
  for (let r = 0; r < rounds; r++) {
    const t0 = cpuNs();
    const w0 = performance.now();
    await loop(calls);
    samples.push((cpuNs() - t0) / calls);
    wallMs += performance.now() - w0;
  }
  if (sink < 0) say('unreachable');
  return { median: median(samples), min: Math.min(...samples), ticksPerRound: wallMs / rounds / DEFAULT_CLOCK_TICK_MS };
}

/**
 * The coarse clock's timer cost, as an upper bound: CPU per second of a process doing nothing but
 * keep the clock in timer mode (a reader making the busy number of reads every tick; the reader's
 * own timer is counted too). Paid only while calls are that many; below, the clock runs no timer.
 */
async function coarseClockTimerUsPerSecond(ms = 2000): Promise<number> {
  const clock = coarseClock(DEFAULT_CLOCK_TICK_MS);
  let sink = 0;
  const reader = setInterval(() => {
    for (let i = 0; i < DEFAULT_CLOCK_BUSY_READS; i++) sink += clock.now();
  }, DEFAULT_CLOCK_TICK_MS);
  const t0 = cpuNs();
  const w0 = performance.now();
  await new Promise((r) => setTimeout(r, ms));
  const us = (cpuNs() - t0) / 1000 / ((performance.now() - w0) / 1000);
  clearInterval(reader);
  if (sink < 0) say('unreachable');
  return us;
}

function bytesPerKey(n: number): number | null {
  if (!gc) return null;
  const keys = makeKeys(n);
  gc();
  gc();
  // Bucket state sits in typed arrays, whose backing stores count as arrayBuffers, not heapUsed.
  const used = () => {
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  const before = used();
  const limiter = createRateLimiter(LIMITS, { gcIntervalMs: 60_000 });
  for (const k of keys) limiter.allow('fetch_jwt_svid', k);
  gc();
  gc();
  const after = used();
  if (limiter.size() !== n) throw new Error(`expected ${n} live keys, limiter holds ${limiter.size()}`);
  return (after - before) / n;
}

const ROUNDS = 5;
const TURN = 1000;
const CALLS = 2_000_000;
const load = loadavg()[0]!;
const few = nsPerCall(makeKeys(10), CALLS);
say(
  `allow() with 10 live keys:      ${few.median.toFixed(1)} ns/call CPU time (median of ${ROUNDS} rounds of ${CALLS / 1e6}M calls; best ${few.min.toFixed(1)}; bare Map.get ${few.mapGet.toFixed(1)})`,
);
const manyKeys = makeKeys(100_000);
const many = nsPerCall(manyKeys, CALLS);
say(
  `allow() with 100,000 live keys: ${many.median.toFixed(1)} ns/call CPU time (median of ${ROUNDS} rounds of ${CALLS / 1e6}M calls; best ${many.min.toFixed(1)}; bare Map.get ${many.mapGet.toFixed(1)})`,
);
// As the agent sees it: every call is its own event-loop turn, so every call reads the clock.
const clocked = nsPerCall(manyKeys, CALLS, ROUNDS, () => performance.now());
say(
  `allow() with 100,000 live keys, clock read on every call: ${clocked.median.toFixed(1)} ns/call CPU time (best ${clocked.min.toFixed(1)}; bare Map.get ${clocked.mapGet.toFixed(1)})`,
);
// Under heavy load: the default coarse clock in timer mode, refreshed by its timer between turns.
const ticking = await nsPerCallTicking(manyKeys, CALLS);
say(
  `allow() with 100,000 live keys, coarse clock (timer mode, ${DEFAULT_CLOCK_TICK_MS} ms tick), ${TURN} calls per event-loop turn: ${ticking.median.toFixed(1)} ns/call CPU time (best ${ticking.min.toFixed(1)}; timer and turns included; ~${ticking.ticksPerRound.toFixed(0)} ticks per round)`,
);
const clockUs = await coarseClockTimerUsPerSecond();
say(
  `coarse clock's timer, at most: ${clockUs.toFixed(0)} µs CPU per second (a process doing nothing but keep it in timer mode; paid only above ${(DEFAULT_CLOCK_BUSY_READS * 1000) / DEFAULT_CLOCK_TICK_MS} reads/s)`,
);
const perKey = bytesPerKey(100_000);
say(
  perKey === null
    ? 'memory per key: skipped (run node with --expose-gc for a stable heap delta)'
    : `memory per key: ${perKey.toFixed(0)} bytes (heap + array buffers delta after gc over 100,000 keys; key strings excluded)`,
);
say(
  `node ${process.version}, ${process.arch}; the limiter's default clock reads performance.now() per call until ${DEFAULT_CLOCK_BUSY_READS} reads in ${DEFAULT_CLOCK_TICK_MS} ms, then serves a timer's reading (in the synchronous loops above the timer never fires: one reading per round); 1-min load average at start ${load.toFixed(2)}`,
);

if (json) {
  process.stdout.write(
    `${JSON.stringify({
      bench: 'limiter',
      node: process.version,
      nsPerCall10Keys: +few.median.toFixed(1),
      nsPerCall100kKeys: +many.median.toFixed(1),
      nsPerCall100kKeysClockPerCall: +clocked.median.toFixed(1),
      nsPerCall100kKeysTickingClock: +ticking.median.toFixed(1),
      clockUsPerSecond: Math.round(clockUs),
      clockTickMs: DEFAULT_CLOCK_TICK_MS,
      mapGetNs10Keys: +few.mapGet.toFixed(1),
      mapGetNs100kKeys: +many.mapGet.toFixed(1),
      loadAverage1m: +load.toFixed(2),
      bytesPerKey: perKey === null ? null : Math.round(perKey),
      keys: { few: few.size, many: many.size },
    })}\n`,
  );
}
