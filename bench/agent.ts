// Benchmark of the reference agent's call path: FetchJWTSVID calls/s on one reused connection
// and with a fresh connection per call, for each limiter placement; and what a rejected call
// costs next to a no-op grpc-js RPC. The server under test runs in a child process (this file
// with --serve) so client and server do not share one event loop. Numbers, never pass/fail.
//   node --import tsx bench/agent.ts [--seconds 10] [--json]
// Each case runs a fixed number of calls after a fixed number of warm-up calls (so the JIT is warm
// and a busy machine changes how long a case takes, not how much of it is measured), bounded in
// time by --seconds per 1000 calls.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { parseAgentConfig, startAgent, type AgentConfigInput } from '../src/agent/index.js';
import { SECURITY_HEADER, workloadProto, workloadService, type SpiffeWorkloadAPIClient } from '../src/proto/index.js';

interface ServeSpec {
  kind: 'agent' | 'noop';
  socket: string;
  config?: Partial<AgentConfigInput>;
}

// ---------- server side (child process) ----------

async function serve(spec: ServeSpec): Promise<void> {
  let stop: () => Promise<void>;
  if (spec.kind === 'agent') {
    const agent = await startAgent(parseAgentConfig({ ...spec.config, socket: spec.socket }), { log: () => {} });
    stop = () => agent.close();
  } else {
    // The floor: a grpc-js server on a Unix socket whose FetchJWTSVID does nothing at all.
    const server = new grpc.Server();
    const noopStream = (call: grpc.ServerWritableStream<unknown, unknown>) => call.end();
    server.addService(workloadService(), {
      FetchJWTSVID: (_call: unknown, cb: grpc.sendUnaryData<object>) => cb(null, { svids: [] }),
      ValidateJWTSVID: (_call: unknown, cb: grpc.sendUnaryData<object>) => cb(null, {}),
      FetchX509SVID: noopStream,
      FetchX509Bundles: noopStream,
      FetchJWTBundles: noopStream,
    });
    await new Promise<void>((resolve, reject) =>
      server.bindAsync(`unix:${spec.socket}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
    );
    stop = () => new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
  }
  process.stdout.write('ready\n');
  // CPU time on request: per-call server CPU is what survives a busy machine, where calls/s do not.
  createInterface({ input: process.stdin }).on('line', () => {
    const u = process.cpuUsage();
    process.stdout.write(`${u.user + u.system}\n`);
  });
  const onSignal = () => void stop().finally(() => process.exit(0));
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
}

// ---------- client side (this process) ----------

interface Served {
  socket: string;
  /** The server process's CPU time so far, µs. */
  cpuUs(): Promise<number>;
  stop(): Promise<void>;
}

const self = fileURLToPath(import.meta.url);
const owned = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of owned) c.kill('SIGKILL');
});

async function startServer(spec: ServeSpec): Promise<Served> {
  const child = spawn(process.execPath, ['--import', 'tsx', self, '--serve', JSON.stringify(spec)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  owned.add(child);
  const lines = createInterface({ input: child.stdout! });
  const waiting: Array<(line: string) => void> = [];
  lines.on('line', (l) => waiting.shift()?.(l));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${spec.kind} server not ready within 20 s`)), 20_000);
    waiting.push(() => {
      clearTimeout(timer);
      resolve();
    });
    void exited.then(() => reject(new Error(`${spec.kind} server exited before ready`)));
  });
  return {
    socket: spec.socket,
    cpuUs() {
      return new Promise<number>((resolve) => {
        waiting.push((l) => resolve(Number(l)));
        child.stdin!.write('cpu\n');
      });
    },
    async stop() {
      child.kill('SIGTERM');
      const grace = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(grace);
      owned.delete(child);
    },
  };
}

function client(socket: string): SpiffeWorkloadAPIClient {
  return new (workloadProto().SpiffeWorkloadAPI)(`unix:${socket}`, grpc.credentials.createInsecure(), {
    'grpc.use_local_subchannel_pool': 1,
  });
}

const md = new grpc.Metadata();
md.add(SECURITY_HEADER, 'true');

function fetchJwt(c: SpiffeWorkloadAPIClient): Promise<number> {
  return new Promise((resolve) => c.FetchJWTSVID({ audience: ['bench'] }, md, (err) => resolve(err ? err.code : 0)));
}

interface Measured {
  calls: number;
  perSecond: number;
  /** Server CPU time per call, µs (user + system). */
  serverCpuUsPerCall: number;
  /** gRPC status name → count. */
  codes: Record<string, number>;
}

/** Warm-up and measured calls per case; a case also stops at msPer1000 × calls / 1000. */
const CALLS = { reused: { warm: 600, measured: 2000 }, fresh: { warm: 300, measured: 1000 } } as const;

/** Concurrent closed-loop callers making `calls` calls (bounded by `maxMs`), after warm-up calls. */
async function measure(server: Served, connection: 'reused' | 'fresh', msPer1000: number, concurrency: number): Promise<Measured> {
  const socket = server.socket;
  const shared = connection === 'reused' ? client(socket) : null;
  const codes: Record<string, number> = {};
  let calls = 0;
  let issued = 0;
  const run = async (target: number, until: number, count: boolean) => {
    while (issued < target && performance.now() < until) {
      issued++;
      const c = shared ?? client(socket);
      const code = await fetchJwt(c);
      if (!shared) c.close();
      if (count) {
        calls++;
        const name = grpc.status[code] ?? String(code);
        codes[name] = (codes[name] ?? 0) + 1;
      }
    }
  };
  const { warm, measured } = CALLS[connection];
  await Promise.all(Array.from({ length: concurrency }, () => run(warm, performance.now() + (msPer1000 * warm) / 1000, false)));
  issued = 0;
  const cpuBefore = await server.cpuUs();
  const start = performance.now();
  const until = start + (msPer1000 * measured) / 1000;
  await Promise.all(Array.from({ length: concurrency }, () => run(measured, until, true)));
  const elapsed = performance.now() - start;
  const cpu = (await server.cpuUs()) - cpuBefore;
  shared?.close();
  return { calls, perSecond: Math.round((calls / elapsed) * 1000), serverCpuUsPerCall: Math.round(cpu / Math.max(1, calls)), codes };
}

interface Row {
  name: string;
  placement: string;
  connection: 'reused' | 'fresh';
  result: Measured;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const json = args.includes('--json');
  const secIdx = args.indexOf('--seconds');
  const seconds = secIdx >= 0 ? Number(args[secIdx + 1]) : 10;
  if (!(seconds > 0 && seconds <= 60)) throw new Error(`--seconds must be between 0 and 60, got ${args[secIdx + 1]}`);
  const ms = seconds * 1000;
  const dir = mkdtempSync(join(tmpdir(), 'attestorm-bench-'));
  const rows: Row[] = [];
  const say = (line: string) => (json ? process.stderr : process.stdout).write(`${line}\n`);
  const CONCURRENCY = { reused: 16, fresh: 8 } as const;
  const cases: Array<{ name: string; placement: string; kind: 'agent' | 'noop'; limit: number }> = [
    { name: 'admitted', placement: 'disabled', kind: 'agent', limit: 0 },
    { name: 'admitted', placement: 'pre-attestation', kind: 'agent', limit: 1_000_000 },
    { name: 'admitted', placement: 'post-attestation', kind: 'agent', limit: 1_000_000 },
    { name: 'rejected', placement: 'pre-attestation', kind: 'agent', limit: 1 },
    { name: 'rejected', placement: 'post-attestation', kind: 'agent', limit: 1 },
    { name: 'no-op grpc-js server', placement: '-', kind: 'noop', limit: 0 },
  ];
  try {
    say(
      `FetchJWTSVID, closed loop: ${CALLS.reused.measured} calls after ${CALLS.reused.warm} warm-up calls, ${CONCURRENCY.reused} in flight on a reused connection; ${CALLS.fresh.measured} after ${CALLS.fresh.warm}, ${CONCURRENCY.fresh} in flight with a fresh connection per call (at most ${seconds} s per 1000 calls)`,
    );
    for (const [i, c] of cases.entries()) {
      const socket = join(dir, `s${i}.sock`);
      const config: Partial<AgentConfigInput> = {
        rateLimit: { placement: c.placement as 'disabled', limits: { fetch_jwt_svid: c.limit } },
      };
      const server = await startServer({ kind: c.kind, socket, config });
      try {
        for (const connection of ['reused', 'fresh'] as const) {
          const result = await measure(server, connection, ms, CONCURRENCY[connection]);
          rows.push({ name: c.name, placement: c.placement, connection, result });
          const codes = Object.entries(result.codes)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ');
          say(
            `  ${c.name.padEnd(22)} ${c.placement.padEnd(17)} ${connection.padEnd(7)} ${String(result.perSecond).padStart(7)} calls/s ${String(result.serverCpuUsPerCall).padStart(6)} µs server CPU/call  (${codes})`,
          );
        }
      } finally {
        await server.stop();
      }
    }
    const get = (name: string, placement: string, connection: string) =>
      rows.find((r) => r.name === name && r.placement === placement && r.connection === connection)?.result;
    for (const connection of ['reused', 'fresh'] as const) {
      const noop = get('no-op grpc-js server', '-', connection)!;
      const pre = get('rejected', 'pre-attestation', connection)!;
      const post = get('rejected', 'post-attestation', connection)!;
      say(
        `  ${connection} connection: a rejected call costs ${pre.serverCpuUsPerCall} µs of server CPU pre-attestation, ${post.serverCpuUsPerCall} µs post-attestation, vs ${noop.serverCpuUsPerCall} µs for a no-op RPC (${pre.perSecond} / ${post.perSecond} / ${noop.perSecond} calls/s)`,
      );
    }
    if (json) process.stdout.write(`${JSON.stringify({ bench: 'agent', seconds, calls: CALLS, concurrency: CONCURRENCY, rows }, null, 2)}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const serveIdx = process.argv.indexOf('--serve');
if (serveIdx >= 0) {
  await serve(JSON.parse(process.argv[serveIdx + 1]!) as ServeSpec);
} else {
  await main();
}
