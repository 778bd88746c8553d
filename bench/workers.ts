// Start-up time and memory of the storm's worker processes at 100, 400 and 1200 workers, started
// as a run starts them: 4 pod processes (the pod bundle), each forking its share of workers (the
// worker bundle, the generator's node flags and environment). Measured per size: wall time from the
// first pod spawn until every worker reported ready, CPU seconds the workers and pods used to get
// there (from /proc/<pid>/stat), and each worker's PSS and USS (/proc/<pid>/smaps_rollup) once all
// are idle. Workers never call (they are never told to go), so only start-up is measured.
// Run: npx tsx bench/workers.ts [--json] [--client h2|grpc-js|native] [--sizes 100,400,1200] [--pods 4] [--start-limit 240] [--exec-argv "<node flags>"]
// (--exec-argv replaces the generator's worker flags, to compare candidates; --format esm bundles the
// pod and worker entries as ES modules, as before they were CommonJS, for a before/after). Bounded: each size has a
// time limit, and every pod and worker is killed before the next size and on exit.
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import {
  WORKER_ENV,
  WORKER_EXEC_ARGV,
  loadBundles,
  readCpuSeconds,
  readPssAndPrivate,
  type LoadClient,
  type PodConfig,
  type WorkerConfig,
} from '../src/load/index.js';
import { bundleEntry } from '../src/util/index.js';

const json = process.argv.includes('--json');
const say = (line: string) => (json ? process.stderr : process.stdout).write(`${line}\n`);
const arg = (flag: string) => {
  const i = process.argv.indexOf(flag);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const SIZES = (arg('--sizes') ?? '100,400,1200').split(',').map(Number);
/** --client h2|grpc-js|native: which workers to start (native: the C worker binary, spawned by the pod process). */
const CLIENT = (arg('--client') ?? 'h2') as LoadClient;
if (!['h2', 'grpc-js', 'native'].includes(CLIENT)) {
  process.stderr.write(`--client must be h2, grpc-js or native, got ${CLIENT}\n`);
  process.exit(2);
}
const PODS = Number(arg('--pods') ?? 4);
if (SIZES.some((n) => !(Number.isInteger(n) && n >= PODS)) || !(Number.isInteger(PODS) && PODS >= 1)) {
  process.stderr.write(`--sizes must be integers of at least --pods (${PODS}), got ${arg('--sizes')}\n`);
  process.exit(2);
}
/** Per size: how long every worker may take to be ready before the size is given up (--start-limit seconds). */
const START_LIMIT_MS = Number(arg('--start-limit') ?? 240) * 1000;
if (!(START_LIMIT_MS >= 1000)) {
  process.stderr.write(`--start-limit must be a number of seconds, got ${arg('--start-limit')}\n`);
  process.exit(2);
}
/**
 * Memory a size needs available before it is tried, per worker (an idle Node worker holds about 10
 * MiB, a native one well under 1 MiB), so the bench never pushes the machine into swap or OOM.
 */
const NEED_PER_WORKER = (CLIENT === 'native' ? 2 : 14) * 2 ** 20;

const WORKER: WorkerConfig = {
  socket: '/nonexistent/attestorm.sock',
  client: CLIENT,
  connection: 'per-call',
  rate: null,
  deadlineMs: 200,
  retry: 'immediate',
  methods: [['FetchJWTSVID', 1]],
  audience: 'attestorm',
  maxCalls: null,
};

function memAvailable(): number {
  const m = /^MemAvailable:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? 0;
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const mib = (b: number) => +(b / 2 ** 20).toFixed(2);

interface SizeResult {
  workers: number;
  pods: number;
  /** Wall seconds from the first pod spawn until the last pod reported every worker ready. */
  startSeconds: number | null;
  /** CPU seconds of workers + pod processes at that moment. */
  startCpuSeconds: number | null;
  startCpuMsPerWorker: number | null;
  pssMedianMiB: number | null;
  pssTotalMiB: number | null;
  ussMedianMiB: number | null;
  ussTotalMiB: number | null;
  skipped?: string;
}

async function stopPods(pods: ChildProcess[]): Promise<void> {
  // SIGTERM: the pod process takes its workers down (SIGTERM, then SIGKILL after its grace).
  for (const p of pods) if (p.exitCode === null && p.signalCode === null) p.kill('SIGTERM');
  await Promise.all(
    pods.map(
      (p) =>
        new Promise<void>((resolve) => {
          if (p.exitCode !== null || p.signalCode !== null) return resolve();
          const hard = setTimeout(() => p.kill('SIGKILL'), 5000);
          p.once('exit', () => {
            clearTimeout(hard);
            resolve();
          });
        }),
    ),
  );
}

/** Processes on the machine now (every /proc/<pid>), to check a size against the pid limit. */
function processCount(): number {
  return readdirSync('/proc').filter((e) => /^\d+$/.test(e)).length;
}

function readNumber(path: string): number {
  try {
    return Number(readFileSync(path, 'utf8').trim()) || Infinity;
  } catch {
    return Infinity;
  }
}

/** Why the machine cannot hold `total` more processes (pid limit, file descriptors), or null. */
function limitProblem(total: number): string | null {
  const pidMax = Math.min(readNumber('/proc/sys/kernel/pid_max'), readNumber('/proc/sys/kernel/threads-max'));
  // Each Node pod process also runs ~10 threads; each worker one (native) or ~10 (Node).
  const perWorker = CLIENT === 'native' ? 1 : 11;
  const need = processCount() + total * perWorker + PODS * 11 + 100;
  if (need > pidMax) return `needs about ${need} pids/threads, the kernel allows ${pidMax}`;
  // Every pod process holds one IPC descriptor per worker.
  const perPod = Math.ceil(total / PODS) + 100;
  const nofile =
    readNumber(`/proc/${process.pid}/limits`) === Infinity
      ? Infinity
      : Number(/Max open files\s+(\d+)/.exec(readFileSync(`/proc/${process.pid}/limits`, 'utf8'))?.[1] ?? Infinity);
  if (perPod > nofile) return `each pod process needs ${perPod} file descriptors, the limit is ${nofile}`;
  return null;
}

async function measure(total: number, bundles: { pod: string; worker: string }, execArgv: string[]): Promise<SizeResult> {
  const empty = {
    workers: total,
    pods: PODS,
    startSeconds: null,
    startCpuSeconds: null,
    startCpuMsPerWorker: null,
    pssMedianMiB: null,
    pssTotalMiB: null,
    ussMedianMiB: null,
    ussTotalMiB: null,
  };
  const free = memAvailable();
  if (free < total * NEED_PER_WORKER) return { ...empty, skipped: `needs ${mib(total * NEED_PER_WORKER)} MiB available, the machine has ${mib(free)} MiB` };
  const limit = limitProblem(total);
  if (limit) return { ...empty, skipped: limit };
  const pods: ChildProcess[] = [];
  const workerPids: number[] = [];
  const t0 = performance.now();
  try {
    const ready = Array.from({ length: PODS }, (_, i) => {
      const n = Math.floor(total / PODS) + (i < total % PODS ? 1 : 0);
      const config: PodConfig = {
        worker: WORKER,
        workers: n,
        workerBundle: bundles.worker,
        startTimeoutMs: START_LIMIT_MS,
        workerExecArgv: execArgv,
        workerEnv: { ...WORKER_ENV },
        workerNice: null,
      };
      const pod = fork(bundles.pod, [JSON.stringify(config)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, NODE_OPTIONS: '' } });
      pods.push(pod);
      return new Promise<number[]>((resolve, reject) => {
        pod.on('message', (msg: { type: string; workerPids?: number[]; message?: string }) => {
          if (msg.type === 'ready') resolve(msg.workerPids!);
          else if (msg.type === 'fatal') reject(new Error(`pod ${i}: ${msg.message}`));
        });
        pod.once('exit', (code, signal) => reject(new Error(`pod ${i} exited before ready (${signal ?? code})`)));
      });
    });
    let limit: NodeJS.Timeout | undefined;
    const all = await Promise.race([
      Promise.all(ready),
      new Promise<never>(
        (_, reject) => (limit = setTimeout(() => reject(new Error(`not every worker was ready within ${START_LIMIT_MS / 1000} s`)), START_LIMIT_MS)),
      ),
    ]).finally(() => clearTimeout(limit));
    const startSeconds = (performance.now() - t0) / 1000;
    for (const list of all) workerPids.push(...list);
    const cpu = await Promise.all([...workerPids, ...pods.map((p) => p.pid!)].map(readCpuSeconds));
    const startCpuSeconds = sum(cpu.map((c) => c ?? 0));
    // Idle, settled: the readings are what every worker holds before its first call.
    await new Promise((r) => setTimeout(r, 1500));
    const mem = (await Promise.all(workerPids.map(readPssAndPrivate))).filter((m): m is { pss: number; private: number } => m !== null);
    return {
      workers: total,
      pods: PODS,
      startSeconds: +startSeconds.toFixed(2),
      startCpuSeconds: +startCpuSeconds.toFixed(2),
      startCpuMsPerWorker: +((startCpuSeconds * 1000) / total).toFixed(1),
      pssMedianMiB: mib(median(mem.map((m) => m.pss))),
      pssTotalMiB: mib(sum(mem.map((m) => m.pss))),
      ussMedianMiB: mib(median(mem.map((m) => m.private))),
      ussTotalMiB: mib(sum(mem.map((m) => m.private))),
    };
  } catch (err) {
    return { ...empty, skipped: (err as Error).message };
  } finally {
    await stopPods(pods);
    // Any worker a pod failed to reap (it was SIGKILLed itself) goes too.
    for (const pid of workerPids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  }
}

const format = arg('--format') ?? 'default';
if (!['default', 'esm', 'cjs'].includes(format)) {
  process.stderr.write(`--format must be esm or cjs, got ${format}\n`);
  process.exit(2);
}
const bundles =
  format === 'default'
    ? await loadBundles(CLIENT)
    : {
        pod: await bundleEntry('src/load/worker/pod-main.ts', { minify: true, format: format as 'esm' | 'cjs' }),
        worker: await bundleEntry('src/load/worker/worker-main-h2.ts', { minify: true, format: format as 'esm' | 'cjs' }),
      };
if ('fallback' in bundles && bundles.fallback) {
  process.stderr.write(`${bundles.fallback}\n`);
  process.exit(1);
}
const execArgv = arg('--exec-argv') !== undefined ? arg('--exec-argv')!.split(/\s+/).filter(Boolean) : WORKER_EXEC_ARGV;
const load = loadavg()[0]!;
const results: SizeResult[] = [];
for (const n of SIZES) {
  const r = await measure(n, bundles, execArgv);
  results.push(r);
  say(
    r.skipped
      ? `${n} workers: not measured (${r.skipped})`
      : `${n} workers (${PODS} pods): all ready in ${r.startSeconds} s wall, ${r.startCpuSeconds} CPU-s (${r.startCpuMsPerWorker} ms per worker); idle PSS median ${r.pssMedianMiB} MiB, total ${r.pssTotalMiB} MiB; USS median ${r.ussMedianMiB} MiB, total ${r.ussTotalMiB} MiB`,
  );
}
say(
  `client ${CLIENT}; node ${process.version}; bundles ${bundles.worker.split('/').pop()}; worker flags ${execArgv.join(' ')}; env ${Object.entries(WORKER_ENV)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')}; 1-min load average at start ${load.toFixed(2)}`,
);
if (json)
  process.stdout.write(
    `${JSON.stringify({ bench: 'workers', client: CLIENT, node: process.version, pods: PODS, workerBundle: bundles.worker.split('/').pop(), workerExecArgv: execArgv, loadAverage1m: +load.toFixed(2), sizes: results })}\n`,
  );
