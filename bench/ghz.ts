// Calls per client CPU-second on reused connections: ghz (the Go gRPC load tool, installed apart
// from the project) against the native worker, both driving FetchJWTSVID at the reference agent
// (unix attestor, limiter disabled) on its Unix socket with the security header. The client's CPU
// is what the kernel charged its processes: ghz's own (bash's `times` after it exits), and the
// native workers' plus their pod process's (the generator's per-second CPU, summed). Each case runs
// for a fixed time with the same number of calls in flight; repetitions alternate the clients and
// the median is kept. Numbers, never pass/fail.
// Run: GHZ_BIN=/opt/ghz/ghz npx tsx bench/ghz.ts [--json] [--seconds 5] [--concurrency 8]
// Without ghz (GHZ_BIN, else ghz in PATH) it prints why and exits 0.
import { spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { parseAgentConfig, startAgent } from '../src/agent/index.js';
import { runLoad } from '../src/load/index.js';
import { PROJECT_ROOT } from '../src/util/index.js';

const argOf = (flag: string) => {
  const i = process.argv.indexOf(flag);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const SECONDS = Number(argOf('--seconds') ?? 5);
const CONCURRENCY = Number(argOf('--concurrency') ?? 8);
const REPS = 3;
const json = process.argv.includes('--json');

function findGhz(): { path: string } | { reason: string } {
  const candidates = process.env.GHZ_BIN
    ? [process.env.GHZ_BIN]
    : (process.env.PATH ?? '')
        .split(delimiter)
        .filter(Boolean)
        .map((d) => join(d, 'ghz'));
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      return { path: c };
    } catch {
      // not here
    }
  }
  return {
    reason: process.env.GHZ_BIN
      ? `GHZ_BIN=${process.env.GHZ_BIN} is not an executable`
      : 'ghz is not in PATH and GHZ_BIN is not set (install: GOTOOLCHAIN=local GOBIN=/opt/ghz go install github.com/bojand/ghz/cmd/ghz@latest, then GHZ_BIN=/opt/ghz/ghz)',
  };
}

const found = findGhz();
if ('reason' in found) {
  process.stderr.write(`bench/ghz.ts skipped: ${found.reason}\n`);
  if (json) process.stdout.write(`${JSON.stringify({ skipped: found.reason })}\n`);
  process.exit(0);
}
const ghz = found;

interface Row {
  client: string;
  calls: number;
  ok: number;
  wallSeconds: number;
  /** CPU the kernel charged the client's processes. */
  cpuSeconds: number;
  callsPerCpuSecond: number;
  callsPerSecond: number;
}

/** user+system seconds from a line of bash's `times` ("0m1.234s 0m0.567s"). */
function timesLine(line: string): number {
  return [...line.matchAll(/(\d+)m([\d.]+)s/g)].reduce((s, m) => s + Number(m[1]) * 60 + Number(m[2]), 0);
}

/** One ghz run; `connections`: how many connections it spreads the in-flight calls over. */
function runGhz(socket: string, connections: number, dir: string): Promise<Row> {
  const out = join(dir, `ghz-${connections}.json`);
  const args = [
    '--insecure',
    '--proto',
    join(PROJECT_ROOT, 'proto', 'workload.proto'),
    '--import-paths',
    join(PROJECT_ROOT, 'proto'),
    '--call',
    'SpiffeWorkloadAPI.FetchJWTSVID',
    '-d',
    '{"audience":["attestorm"]}',
    '-m',
    '{"workload.spiffe.io":"true"}',
    '-c',
    String(CONCURRENCY),
    '--connections',
    String(connections),
    '-z',
    `${SECONDS}s`,
    '-t',
    '1s',
    '-O',
    'json',
    '-o',
    out,
    `unix://${socket}`,
  ];
  return new Promise((resolve, reject) => {
    // bash reports the CPU of the children it waited for: ghz's, every thread included.
    const child = spawn(
      'bash',
      ['-c', 'start=$(date +%s.%N); "$@" >/dev/null 2>"$GHZ_ERR"; s=$?; end=$(date +%s.%N); echo "wall $start $end"; times; exit $s', 'ghz', ghz.path, ...args],
      {
        env: { ...process.env, GHZ_ERR: join(dir, 'ghz.stderr') },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let text = '';
    child.stdout.on('data', (d) => (text += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), (SECONDS + 60) * 1000);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`ghz exited with ${code}: ${readFileSync(join(dir, 'ghz.stderr'), 'utf8').slice(0, 500)}`));
      const lines = text.trim().split('\n');
      const wall = /^wall ([\d.]+) ([\d.]+)/.exec(lines[0] ?? '');
      const cpuSeconds = timesLine(lines[2] ?? '');
      const report = JSON.parse(readFileSync(out, 'utf8')) as { count: number; statusCodeDistribution?: Record<string, number> };
      const calls = report.count;
      const wallSeconds = wall ? Number(wall[2]) - Number(wall[1]) : SECONDS;
      resolve({
        client: `ghz (${connections} connection${connections === 1 ? '' : 's'})`,
        calls,
        ok: report.statusCodeDistribution?.OK ?? 0,
        wallSeconds: +wallSeconds.toFixed(2),
        cpuSeconds: +cpuSeconds.toFixed(3),
        callsPerCpuSecond: Math.round(calls / cpuSeconds),
        callsPerSecond: Math.round(calls / SECONDS),
      });
    });
  });
}

/** CONCURRENCY native workers, each one call at a time on its own reused connection. */
async function runNative(socket: string): Promise<Row> {
  const s = await runLoad({
    socket,
    pods: 1,
    workersPerPod: CONCURRENCY,
    durationMs: SECONDS * 1000,
    connection: 'per-worker',
    client: 'native',
    deadlineMs: 1000,
  });
  if (s.client !== 'native') throw new Error(`the native worker did not run: ${s.clientFallback}`);
  // Workers and their pod process: the generator's processes, as each second's CPU counted them.
  const cpuSeconds = (s.cpu?.generatorCores ?? 0) * (s.durationMs / 1000);
  return {
    client: `native (${CONCURRENCY} workers, pod process included)`,
    calls: s.totals.calls,
    ok: s.totals.ok,
    wallSeconds: +(s.durationMs / 1000).toFixed(2),
    cpuSeconds: +cpuSeconds.toFixed(3),
    callsPerCpuSecond: Math.round(s.totals.calls / cpuSeconds),
    callsPerSecond: Math.round(s.totals.calls / (s.durationMs / 1000)),
  };
}

const median = (rows: Row[]) => [...rows].sort((a, b) => a.callsPerCpuSecond - b.callsPerCpuSecond)[rows.length >> 1]!;

const dir = mkdtempSync(join(tmpdir(), 'attestorm-bench-ghz-'));
const socket = join(dir, 'agent.sock');
const agent = await startAgent(parseAgentConfig({ socket, attestors: ['unix'], rateLimit: { placement: 'disabled' } }), { log: () => {}, graceMs: 1000 });
const runs: Record<string, Row[]> = {};
try {
  for (let i = 0; i < REPS; i++) {
    for (const run of [() => runGhz(socket, 1, dir), () => runGhz(socket, CONCURRENCY, dir), () => runNative(socket)]) {
      const row = await run();
      (runs[row.client] ??= []).push(row);
    }
  }
} finally {
  await agent.close();
  rmSync(dir, { recursive: true, force: true });
}

const rows = Object.values(runs).map(median);
const nativeRow = rows.find((r) => r.client.startsWith('native'))!;
if (json) process.stdout.write(`${JSON.stringify({ seconds: SECONDS, concurrency: CONCURRENCY, reps: REPS, ghz: ghz.path, rows, perRun: runs }, null, 2)}\n`);
const out = json ? process.stderr : process.stdout;
out.write(
  `FetchJWTSVID at the reference agent (unix attestor, no limiter), reused connections, ${CONCURRENCY} calls in flight, ${SECONDS} s per run, median of ${REPS} (by calls per client CPU-second)\n`,
);
for (const r of rows) {
  out.write(
    `${r.client.padEnd(44)} calls ${String(r.calls).padStart(7)}  ok ${(r.calls ? r.ok / r.calls : 0).toFixed(3)}  client CPU ${r.cpuSeconds.toFixed(2)} s  calls/client-CPU-s ${String(r.callsPerCpuSecond).padStart(6)}  calls/s ${String(r.callsPerSecond).padStart(6)}${r === nativeRow ? '' : `  (native ÷ this: ${(nativeRow.callsPerCpuSecond / r.callsPerCpuSecond).toFixed(2)}×)`}\n`,
  );
}
