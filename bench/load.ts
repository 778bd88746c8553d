// How much load the generator drives per CPU-second of its workers, per worker client (h2: gRPC on
// node:http2; grpc-js), against the reference agent (limiting disabled) and a bare grpc-js server,
// next to a bare grpc-js client loop with no harness (one plain process, same connection mode) —
// the ceiling the generator is judged against (target: generator/bare ≥ 0.9) — and the workers'
// real memory (PSS), idle and mid-storm (target: ≤ 15 MiB).
// Like for like: one generator worker (its own process, one call in flight) against one plain
// process with one call loop; repetitions alternate the clients and the median is kept, because the
// CPU cost of a call on a shared two-core machine drifts with whatever else runs.
// Run: npx tsx bench/load.ts [--json] [--memory-only] [--no-memory] [--clients h2,native] [--targets bare-server]. Each measurement is bounded to a few seconds.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAgentConfig, startAgent } from '../src/agent/index.js';
import { PROJECT_ROOT } from '../src/util/index.js';
import {
  LOAD_CLIENTS,
  WORKER_ENV,
  WORKER_EXEC_ARGV,
  loadBundles,
  readPssAndPrivate,
  runLoad,
  type ConnectionMode,
  type LoadClient,
  type WorkerConfig,
} from '../src/load/index.js';
import { nativeWorkerArgs } from '../src/load/worker/native-args.js';
import { startBareServer } from '../test/load/support/bare-server.js';

const argOf = (flag: string) => {
  const i = process.argv.indexOf(flag);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
/** --clients h2,native: the worker clients to measure (default all); --targets bare-server: the servers. */
const CLIENTS = (argOf('--clients')?.split(',') ?? LOAD_CLIENTS) as LoadClient[];
const TARGETS = argOf('--targets')?.split(',') ?? ['bare-server', 'reference-agent'];

const WORKERS = 1;
const DURATION_MS = 3000;
const REPS = 3;
const MEMORY_WORKERS = 8;
const MEMORY_REPS = 3;
const MEMORY_DURATION_MS = 6000;
const MODES: ConnectionMode[] = ['per-call', 'per-worker'];

// The no-harness client: WORKERS concurrent call loops in one process, each one call at a time,
// same channel options as the generator's workers, CPU from process.cpuUsage over the loop only.
const BARE_CLIENT = `
const grpc = require('@grpc/grpc-js');
const [socket, mode, loops, ms] = [process.argv[1], process.argv[2], Number(process.argv[3]), Number(process.argv[4])];
const md = new grpc.Metadata(); md.set('workload.spiffe.io', 'true');
const creds = grpc.credentials.createInsecure();
const opts = { 'grpc.use_local_subchannel_pool': 1, 'grpc.enable_channelz': 0, 'grpc.enable_retries': 0 };
const req = Buffer.from([0x0a, 9, ...Buffer.from('attestorm')]);
const pass = (b) => b;
let calls = 0, ok = 0;
const cpu0 = process.cpuUsage();
const end = Date.now() + ms;
let running = loops;
function loop(shared) {
  if (Date.now() >= end) { if (shared) shared.close(); if (--running === 0) finish(); return; }
  const c = mode === 'per-call' ? new grpc.Client('unix:' + socket, creds, opts) : shared;
  c.makeUnaryRequest('/SpiffeWorkloadAPI/FetchJWTSVID', pass, pass, req, md, { deadline: Date.now() + 1000 }, (err) => {
    calls++; if (!err) ok++;
    if (mode === 'per-call') c.close();
    loop(shared);
  });
}
function finish() {
  const cpu = process.cpuUsage(cpu0);
  process.stdout.write(JSON.stringify({ calls, ok, cpuSeconds: (cpu.user + cpu.system) / 1e6 }));
  process.exit(0);
}
for (let i = 0; i < loops; i++) loop(mode === 'per-call' ? null : new grpc.Client('unix:' + socket, creds, opts));
`;

function bareClient(socket: string, mode: ConnectionMode): Promise<{ calls: number; ok: number; cpuSeconds: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', BARE_CLIENT, socket, mode, String(WORKERS), String(DURATION_MS)], {
      cwd: PROJECT_ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), DURATION_MS + 30_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(JSON.parse(out) as { calls: number; ok: number; cpuSeconds: number });
      else reject(new Error(`bare client exited with ${code}`));
    });
  });
}

interface Row {
  target: string;
  mode: ConnectionMode;
  /** The generator with a worker client, or the bare grpc-js loop. */
  client: LoadClient | 'bare';
  calls: number;
  okRatio: number;
  cpuSeconds: number;
  callsPerCpuSecond: number;
  workerPssMedianMiB: number | null;
  workerPssMaxMiB: number | null;
  workerUssMedianMiB: number | null;
}

async function generator(target: string, socket: string, mode: ConnectionMode, client: LoadClient, workers = WORKERS, durationMs = DURATION_MS): Promise<Row> {
  const s = await runLoad({ socket, pods: 1, workersPerPod: workers, durationMs, connection: mode, client });
  const mib = (b: number | undefined) => (b === undefined ? null : +(b / 2 ** 20).toFixed(1));
  return {
    target,
    mode,
    client,
    calls: s.totals.calls,
    okRatio: s.totals.calls ? s.totals.ok / s.totals.calls : 0,
    cpuSeconds: +s.workerCpuSeconds.toFixed(3),
    callsPerCpuSecond: Math.round(s.totals.calls / s.workerCpuSeconds),
    workerPssMedianMiB: mib(s.workerMemoryBytes?.median),
    workerPssMaxMiB: mib(s.workerMemoryBytes?.max),
    workerUssMedianMiB: mib(s.workerMemoryBytes?.privateMedian),
  };
}

async function bare(target: string, socket: string, mode: ConnectionMode): Promise<Row> {
  const r = await bareClient(socket, mode);
  return {
    target,
    mode,
    client: 'bare',
    calls: r.calls,
    okRatio: r.calls ? r.ok / r.calls : 0,
    cpuSeconds: +r.cpuSeconds.toFixed(3),
    callsPerCpuSecond: Math.round(r.calls / r.cpuSeconds),
    workerPssMedianMiB: null,
    workerPssMaxMiB: null,
    workerUssMedianMiB: null,
  };
}

/** Idle PSS and USS of k workers that started and reported ready but have made no call (MiB). */
async function idleWorkerMemory(client: LoadClient, k: number): Promise<Array<{ pss: number; uss: number }>> {
  const { worker } = await loadBundles(client);
  const config: WorkerConfig = {
    socket: '/nonexistent/attestorm.sock',
    client,
    connection: 'per-call',
    rate: null,
    deadlineMs: 1000,
    retry: 'immediate',
    methods: [['FetchJWTSVID', 1]],
    audience: 'attestorm',
    maxCalls: null,
  };
  const stdio: ['ignore', 'inherit', 'inherit', 'ipc'] = ['ignore', 'inherit', 'inherit', 'ipc'];
  const env = { ...process.env, ...WORKER_ENV };
  const kids: ChildProcess[] = Array.from({ length: k }, () =>
    client === 'native'
      ? spawn(worker, nativeWorkerArgs(config), { env, stdio })
      : fork(worker, [JSON.stringify(config)], { execArgv: WORKER_EXEC_ARGV, env, stdio }),
  );
  try {
    await Promise.all(
      kids.map(
        (c) =>
          new Promise((resolve, reject) => {
            c.once('message', resolve);
            c.once('exit', () => reject(new Error('worker exited before ready')));
            setTimeout(() => reject(new Error('worker not ready in 30 s')), 30_000);
          }),
      ),
    );
    await new Promise((r) => setTimeout(r, 1500));
    const read = await Promise.all(kids.map((c) => readPssAndPrivate(c.pid!)));
    return read.map((m) => ({ pss: +((m?.pss ?? 0) / 2 ** 20).toFixed(2), uss: +((m?.private ?? 0) / 2 ** 20).toFixed(2) }));
  } finally {
    for (const c of kids) c.kill('SIGKILL');
  }
}

const medianOf = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

const rows: Row[] = [];
const server = await startBareServer();
const dir = mkdtempSync(join(tmpdir(), 'attestorm-benchload-'));
const agentSocket = join(dir, 'agent.sock');
const agent = await startAgent(parseAgentConfig({ socket: agentSocket, attestors: ['unix'], rateLimit: { placement: 'disabled' } }), {
  log: () => {},
  graceMs: 1000,
});
function median(list: Row[]): Row {
  const sorted = [...list].sort((a, b) => a.callsPerCpuSecond - b.callsPerCpuSecond);
  return sorted[sorted.length >> 1]!;
}
const targets = (
  [
    ['bare-server', server.socket],
    ['reference-agent', agentSocket],
  ] as const
).filter(([t]) => TARGETS.includes(t));
interface MemoryRow {
  client: LoadClient;
  idlePssMedianMiB: number;
  idleUssMedianMiB: number;
  /** Per target: medians over MEMORY_REPS runs of the per-run median and max worker PSS (and median USS) mid-storm. */
  storm: Record<string, { medianMiB: number; maxMiB: number; ussMedianMiB: number }>;
}
const memory: MemoryRow[] = [];
try {
  for (const mode of process.argv.includes('--memory-only') ? [] : MODES) {
    for (const [target, socket] of targets) {
      const g: Record<string, Row[]> = Object.fromEntries(CLIENTS.map((c) => [c, []]));
      const b: Row[] = [];
      for (let i = 0; i < REPS; i++) {
        for (const client of CLIENTS) g[client]!.push(await generator(target, socket, mode, client));
        b.push(await bare(target, socket, mode));
      }
      rows.push(...CLIENTS.map((c) => median(g[c]!)), median(b));
    }
  }
  for (const client of process.argv.includes('--no-memory') ? [] : CLIENTS) {
    const idle = await idleWorkerMemory(client, MEMORY_WORKERS);
    const storm: MemoryRow['storm'] = {};
    for (const [target, socket] of targets) {
      const runs: Row[] = [];
      for (let i = 0; i < MEMORY_REPS; i++) runs.push(await generator(target, socket, 'per-call', client, MEMORY_WORKERS, MEMORY_DURATION_MS));
      storm[target] = {
        medianMiB: medianOf(runs.map((r) => r.workerPssMedianMiB ?? 0)),
        maxMiB: medianOf(runs.map((r) => r.workerPssMaxMiB ?? 0)),
        ussMedianMiB: medianOf(runs.map((r) => r.workerUssMedianMiB ?? 0)),
      };
    }
    memory.push({ client, idlePssMedianMiB: medianOf(idle.map((m) => m.pss)), idleUssMedianMiB: medianOf(idle.map((m) => m.uss)), storm });
  }
} finally {
  await agent.close();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}

const ratios = (rows.length ? MODES : []).flatMap((mode) =>
  targets.flatMap(([target]) => {
    const b = rows.find((r) => r.mode === mode && r.target === target && r.client === 'bare')!;
    return CLIENTS.map((client) => {
      const g = rows.find((r) => r.mode === mode && r.target === target && r.client === client)!;
      return { target, mode, client, generatorOverBare: +(g.callsPerCpuSecond / b.callsPerCpuSecond).toFixed(2) };
    });
  }),
);

if (process.argv.includes('--json')) {
  process.stdout.write(
    `${JSON.stringify({ workers: WORKERS, durationMs: DURATION_MS, reps: REPS, memoryWorkers: MEMORY_WORKERS, rows, ratios, memory }, null, 2)}\n`,
  );
}
const header = ['target', 'mode', 'client', 'calls', 'ok', 'cpu s', 'calls/cpu-s', 'PSS med MiB', 'PSS max MiB'];
const lines = rows.map((r) => [
  r.target,
  r.mode,
  r.client,
  String(r.calls),
  r.okRatio.toFixed(2),
  r.cpuSeconds.toFixed(2),
  String(r.callsPerCpuSecond),
  String(r.workerPssMedianMiB ?? '-'),
  String(r.workerPssMaxMiB ?? '-'),
]);
const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
const fmt = (cells: string[]) => cells.map((c, i) => (i < 3 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
process.stderr.write(
  `load generator: ${WORKERS} worker (client ${CLIENTS.join(', ')}) vs a bare grpc-js client process with ${WORKERS} loop, ${DURATION_MS / 1000} s each, median of ${REPS}\n`,
);
process.stderr.write(`${fmt(header)}\n${lines.map(fmt).join('\n')}\n`);
for (const r of ratios)
  process.stderr.write(`generator (${r.client})/bare grpc-js loop, calls per CPU-second, ${r.target}, ${r.mode}: ${r.generatorOverBare}\n`);
for (const m of memory) {
  const storms = Object.entries(m.storm)
    .map(([t, v]) => `${t} PSS median ${v.medianMiB} / max ${v.maxMiB}, USS median ${v.ussMedianMiB}`)
    .join('; ');
  process.stderr.write(
    `worker memory MiB, client ${m.client}: idle PSS ${m.idlePssMedianMiB}, USS ${m.idleUssMedianMiB}; per-call storm, ${MEMORY_WORKERS} workers, mid-run (median of ${MEMORY_REPS}): ${storms}\n`,
  );
}
