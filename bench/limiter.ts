// Cost of the rate limiter's allow() with few and with many live keys, and its memory per key.
// Run: node --expose-gc --import tsx bench/limiter.ts [--json]   (npm run bench runs it that way;
// without --expose-gc the memory figure is skipped). Human lines go to stdout, or to stderr when
// --json puts one JSON object on stdout.
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { createRateLimiter, type LimitMethodKey } from '../src/agent/index.js';

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
const CALLS = 2_000_000;
const load = loadavg()[0]!;
const few = nsPerCall(makeKeys(10), CALLS);
say(`allow() with 10 live keys:      ${few.median.toFixed(1)} ns/call CPU time (median of ${ROUNDS} rounds of ${CALLS / 1e6}M calls; best ${few.min.toFixed(1)}; bare Map.get ${few.mapGet.toFixed(1)})`);
const manyKeys = makeKeys(100_000);
const many = nsPerCall(manyKeys, CALLS);
say(`allow() with 100,000 live keys: ${many.median.toFixed(1)} ns/call CPU time (median of ${ROUNDS} rounds of ${CALLS / 1e6}M calls; best ${many.min.toFixed(1)}; bare Map.get ${many.mapGet.toFixed(1)})`);
// As the agent sees it: every call is its own event-loop turn, so every call reads the clock.
const clocked = nsPerCall(manyKeys, CALLS, ROUNDS, () => performance.now());
say(`allow() with 100,000 live keys, clock read on every call: ${clocked.median.toFixed(1)} ns/call CPU time (best ${clocked.min.toFixed(1)}; bare Map.get ${clocked.mapGet.toFixed(1)})`);
const perKey = bytesPerKey(100_000);
say(
  perKey === null
    ? 'memory per key: skipped (run node with --expose-gc for a stable heap delta)'
    : `memory per key: ${perKey.toFixed(0)} bytes (heap + array buffers delta after gc over 100,000 keys; key strings excluded)`,
);
say(
  `node ${process.version}, ${process.arch}; the limiter's default clock (performance.now read once per synchronous run, so once per round here; in the agent once per call); 1-min load average at start ${load.toFixed(2)}`,
);

if (json) {
  process.stdout.write(
    `${JSON.stringify({
      bench: 'limiter',
      node: process.version,
      nsPerCall10Keys: +few.median.toFixed(1),
      nsPerCall100kKeys: +many.median.toFixed(1),
      nsPerCall100kKeysClockPerCall: +clocked.median.toFixed(1),
      mapGetNs10Keys: +few.mapGet.toFixed(1),
      mapGetNs100kKeys: +many.mapGet.toFixed(1),
      loadAverage1m: +load.toFixed(2),
      bytesPerKey: perKey === null ? null : Math.round(perKey),
      keys: { few: few.size, many: many.size },
    })}\n`,
  );
}
