// `npm run bench`: runs each benchmark in its own process (so one's heap and sockets cannot skew
// another's numbers) and prints what each measured. Numbers, never pass/fail.
//   npm run bench [-- limiter agent load]           human-readable lines on stdout
//   npm run --silent bench -- --json [--repeat N]    one JSON object on stdout (names: bench/README.md),
//                                                     human lines on stderr; N runs, median + min–max
//   --seconds S                                      passed to bench/agent.ts (seconds per case)
//   npm run bench -- workers [--sizes 100,400]       worker start-up and memory; only when named
//                                                     (it starts up to 1200 processes)
import { spawnSync } from 'node:child_process';
import { loadavg, cpus } from 'node:os';
import { fileURLToPath } from 'node:url';

const benches: Array<{ name: string; file: string; nodeArgs: string[]; onlyWhenNamed?: boolean }> = [
  { name: 'limiter', file: 'limiter.ts', nodeArgs: ['--expose-gc'] },
  { name: 'agent', file: 'agent.ts', nodeArgs: [] },
  { name: 'load', file: 'load.ts', nodeArgs: [] },
  { name: 'pod-list', file: 'pod-list.ts', nodeArgs: [] },
  // Skips, printing why, when ghz is not installed (GHZ_BIN, else PATH).
  { name: 'ghz', file: 'ghz.ts', nodeArgs: [] },
  { name: 'workers', file: 'workers.ts', nodeArgs: [], onlyWhenNamed: true },
];

const args = process.argv.slice(2);
const json = args.includes('--json');
const valueOf = (flag: string): string | undefined => {
  const i = args.indexOf(flag);
  return i >= 0 ? args[i + 1] : undefined;
};
const repeatText = valueOf('--repeat') ?? '1';
const repeat = Number(repeatText);
if (!(Number.isInteger(repeat) && repeat >= 1 && repeat <= 20)) {
  process.stderr.write(`--repeat must be an integer from 1 to 20, got ${repeatText}\n`);
  process.exit(2);
}
const seconds = valueOf('--seconds');
const sizes = valueOf('--sizes');
const flagValues = new Set([valueOf('--repeat'), seconds, sizes].filter((v) => v !== undefined));
const only = args.filter((a) => !a.startsWith('-') && !flagValues.has(a));
for (const o of only) {
  if (!benches.some((b) => b.name === o || b.file === o)) {
    process.stderr.write(`unknown benchmark "${o}": choose from ${benches.map((b) => b.name).join(', ')}\n`);
    process.exit(2);
  }
}
const human = (line: string) => (json ? process.stderr : process.stdout).write(line);

/** Raw JSON of each benchmark's runs, by benchmark name. */
const runs: Record<string, unknown[]> = {};
let failed = 0;
for (const { name, file, nodeArgs, onlyWhenNamed } of benches) {
  const named = only.some((o) => o === name || o === file);
  if ((only.length || onlyWhenNamed) && !named) continue;
  const path = fileURLToPath(new URL(file, import.meta.url));
  const benchArgs = [
    ...(json ? ['--json'] : []),
    ...(name === 'agent' && seconds ? ['--seconds', seconds] : []),
    ...(name === 'workers' && sizes ? ['--sizes', sizes] : []),
  ];
  for (let r = 0; r < (json ? repeat : 1); r++) {
    human(`\n== bench/${file}${json && repeat > 1 ? ` (run ${r + 1} of ${repeat})` : ''} ==\n`);
    const res = spawnSync(process.execPath, [...nodeArgs, '--import', 'tsx', path, ...benchArgs], {
      stdio: ['ignore', json ? 'pipe' : 'inherit', 'inherit'],
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    if (res.status !== 0) {
      failed++;
      human(`bench/${file} exited with ${res.status ?? res.signal}\n`);
      continue;
    }
    if (json) (runs[name] ??= []).push(JSON.parse(res.stdout) as unknown);
  }
}

if (json) process.stdout.write(`${JSON.stringify(summarize(runs), null, 2)}\n`);
process.exitCode = failed ? 1 : 0;

// ---------- the JSON object: named figures, medians across runs, min–max, ratios ----------

interface LimiterRun {
  nsPerCall10Keys: number;
  nsPerCall100kKeys: number;
  nsPerCall100kKeysClockPerCall?: number;
  nsPerCall100kKeysTickingClock?: number;
  clockUsPerSecond?: number;
  mapGetNs10Keys: number;
  mapGetNs100kKeys: number;
  bytesPerKey: number | null;
  loadAverage1m: number;
}
interface WorkersRun {
  sizes: Array<{
    workers: number;
    startSeconds: number | null;
    startCpuMsPerWorker: number | null;
    pssMedianMiB: number | null;
    pssTotalMiB: number | null;
    ussMedianMiB: number | null;
    ussTotalMiB: number | null;
  }>;
}
interface AgentRow {
  name: string;
  placement: string;
  connection: 'reused' | 'fresh';
  result: { perSecond: number; serverCpuUsPerCall: number; calls: number };
}
interface AgentRun {
  seconds: number;
  rows: AgentRow[];
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

function round(x: number, digits = 1): number {
  return Math.round(x * 10 ** digits) / 10 ** digits;
}

/** Figures per run, by name ("limiter.allowNs100k"); null where a run did not measure it. */
function figuresOf(runsByBench: Record<string, unknown[]>): Array<Record<string, number | null>> {
  const n = Math.max(0, ...Object.values(runsByBench).map((r) => r.length));
  const out: Array<Record<string, number | null>> = [];
  for (let i = 0; i < n; i++) {
    const f: Record<string, number | null> = {};
    const lim = runsByBench.limiter?.[i] as LimiterRun | undefined;
    if (lim) {
      f['limiter.allowNs10'] = lim.nsPerCall10Keys;
      f['limiter.allowNs100k'] = lim.nsPerCall100kKeys;
      f['limiter.allowNs100kClockPerCall'] = lim.nsPerCall100kKeysClockPerCall ?? null;
      f['limiter.allowNs100kTickingClock'] = lim.nsPerCall100kKeysTickingClock ?? null;
      f['limiter.clockUsPerSecond'] = lim.clockUsPerSecond ?? null;
      f['limiter.mapGetNs10'] = lim.mapGetNs10Keys;
      f['limiter.mapGetNs100k'] = lim.mapGetNs100kKeys;
      f['limiter.bytesPerKey'] = lim.bytesPerKey;
      f['limiter.loadAverage1m'] = lim.loadAverage1m;
    }
    const agent = runsByBench.agent?.[i] as AgentRun | undefined;
    if (agent) {
      const cpu = (name: string, placement: string, connection: string) =>
        agent.rows.find((r) => r.name === name && r.placement === placement && r.connection === connection)?.result.serverCpuUsPerCall ?? null;
      const cases: Array<[string, string, string]> = [
        ['noop', 'no-op grpc-js server', '-'],
        ['admitted', 'admitted', 'disabled'],
        ['admittedPre', 'admitted', 'pre-attestation'],
        ['admittedPost', 'admitted', 'post-attestation'],
        ['rejectedPre', 'rejected', 'pre-attestation'],
        ['rejectedPost', 'rejected', 'post-attestation'],
      ];
      for (const [label, name, placement] of cases) {
        f[`agent.${label}ReusedUs`] = cpu(name, placement, 'reused');
        f[`agent.${label}FreshUs`] = cpu(name, placement, 'fresh');
      }
      const ratio = (a: string, b: string) => (f[a] != null && f[b] ? round(f[a]! / f[b]!, 2) : null);
      f['ratios.admittedReused'] = ratio('agent.admittedReusedUs', 'agent.noopReusedUs');
      f['ratios.admittedFresh'] = ratio('agent.admittedFreshUs', 'agent.noopFreshUs');
      f['ratios.rejectedPreReused'] = ratio('agent.rejectedPreReusedUs', 'agent.noopReusedUs');
      f['ratios.rejectedPreFresh'] = ratio('agent.rejectedPreFreshUs', 'agent.noopFreshUs');
      f['ratios.rejectedPostReused'] = ratio('agent.rejectedPostReusedUs', 'agent.noopReusedUs');
    }
    const workers = runsByBench.workers?.[i] as WorkersRun | undefined;
    for (const w of workers?.sizes ?? []) {
      f[`workers.startSeconds${w.workers}`] = w.startSeconds;
      f[`workers.startCpuMsPerWorker${w.workers}`] = w.startCpuMsPerWorker;
      f[`workers.pssMedianMiB${w.workers}`] = w.pssMedianMiB;
      f[`workers.pssTotalMiB${w.workers}`] = w.pssTotalMiB;
      f[`workers.ussMedianMiB${w.workers}`] = w.ussMedianMiB;
      f[`workers.ussTotalMiB${w.workers}`] = w.ussTotalMiB;
    }
    if (lim) f['ratios.limiterAllow100kOverMapGet'] = lim.mapGetNs100kKeys ? round(lim.nsPerCall100kKeys / lim.mapGetNs100kKeys, 2) : null;
    out.push(f);
  }
  return out;
}

/** Nests "a.b" names into { a: { b } }. */
function nest(flat: Record<string, unknown>): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [k, v] of Object.entries(flat)) {
    const [group, name] = k.split('.') as [string, string];
    (out[group] ??= {})[name] = v;
  }
  return out;
}

function summarize(runsByBench: Record<string, unknown[]>) {
  const perRun = figuresOf(runsByBench);
  const names = [...new Set(perRun.flatMap((f) => Object.keys(f)))];
  const medianOf: Record<string, number | null> = {};
  const range: Record<string, [number, number] | null> = {};
  for (const name of names) {
    const xs = perRun.map((f) => f[name]).filter((x): x is number => typeof x === 'number');
    medianOf[name] = xs.length ? round(median(xs), name.startsWith('ratios.') ? 2 : 1) : null;
    range[name] = xs.length ? [Math.min(...xs), Math.max(...xs)] : null;
  }
  return {
    schema: 'attestorm-bench/1',
    runs: perRun.length,
    machine: { cpus: cpus().length, node: process.version, arch: process.arch, loadAverage1mAtEnd: round(loadavg()[0]!, 2) },
    ...nest(medianOf),
    range: nest(range),
    perRun: perRun.map(nest),
    ...(runsByBench.load ? { loadRaw: runsByBench.load } : {}),
    ...(runsByBench['pod-list'] ? { podListRaw: runsByBench['pod-list'] } : {}),
  };
}
