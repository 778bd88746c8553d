// Runs one native worker binary as its pod process does (node's IPC channel, the same command line),
// sends it 'go', and gathers what it reports: per-outcome and per-status counts from its 'interval'
// lines, its 'done' line, 'fatal' lines, stderr (where a sanitizer reports) and how it exited. A
// worker that neither finishes nor exits in time is killed and reported as hung.
import { spawn } from 'node:child_process';
import { zeroCounts, type FromWorker, type Outcome, type WorkerConfig } from '../../../src/load/worker/messages.js';
import { nativeWorkerArgs } from '../../../src/load/worker/native-args.js';

export interface NativeRun {
  counts: Record<Outcome, number>;
  byCode: Record<string, number>;
  done: { calls: number } | null;
  fatal: string[];
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  hung: boolean;
  stderr: string;
}

export interface NativeRunOptions {
  socket: string;
  maxCalls: number;
  connection?: WorkerConfig['connection'];
  deadlineMs?: number;
  env?: NodeJS.ProcessEnv;
  /** How long the worker may take to finish its calls and exit. */
  timeoutMs?: number;
}

export function runNativeWorker(binary: string, opts: NativeRunOptions): Promise<NativeRun> {
  const config: WorkerConfig = {
    socket: opts.socket,
    client: 'native',
    connection: opts.connection ?? 'per-worker',
    rate: null,
    deadlineMs: opts.deadlineMs ?? 2000,
    retry: 'immediate',
    methods: [['FetchJWTSVID', 1]],
    audience: 'edge-test',
    maxCalls: opts.maxCalls,
  };
  const child = spawn(binary, nativeWorkerArgs(config), { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], env: opts.env ?? process.env });
  const run: NativeRun = { counts: zeroCounts(), byCode: {}, done: null, fatal: [], exitCode: null, signal: null, hung: false, stderr: '' };
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (run.stderr += s));
  child.on('message', (msg: FromWorker) => {
    switch (msg.type) {
      case 'ready': {
        const now = Date.now();
        child.send({ type: 'go', t0: now, endAt: now + 60_000 });
        break;
      }
      case 'interval':
        for (const [k, n] of Object.entries(msg.data.counts)) run.counts[k as Outcome] += n;
        for (const [k, n] of Object.entries(msg.data.byCode)) run.byCode[k] = (run.byCode[k] ?? 0) + n;
        break;
      case 'done':
        run.done = { calls: msg.calls };
        break;
      case 'fatal':
        run.fatal.push(msg.message);
        break;
    }
  });
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      run.hung = true;
      child.kill('SIGKILL');
    }, opts.timeoutMs ?? 10_000);
    // 'close' comes after the last IPC message and the end of stderr.
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      run.exitCode = code;
      run.signal = signal;
      resolve(run);
    });
  });
}
