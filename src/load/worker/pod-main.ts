// A pod's main process: started inside the pod's cgroup as the pod's user, it forks the pod's
// workers (which inherit both), merges their per-second data and forwards it to the generator.
// Plain node, bundled: it loads hdr-histogram-js only.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { setPriority } from 'node:os';
import { IntervalMerger } from './interval.js';
import type { FromPod, FromWorker, GoMessage, IntervalData, PodConfig, ToPod, ToWorker } from './messages.js';
import { nativeWorkerArgs } from './native-args.js';

const config = JSON.parse(process.argv[2] ?? '{}') as PodConfig;
if (!process.send) {
  process.stderr.write('attestorm pod process: must be started with an IPC channel\n');
  process.exit(2);
}

// Seconds are forwarded this long after they end, leaving workers time to ship theirs.
const FORWARD_GRACE_MS = 250;
// Workers get this long to send their final second after being told to stop.
const STOP_GRACE_MS = 2000;

const workerEnv = { ...process.env, ...config.workerEnv };
const workers: ChildProcess[] = [];
const merging = new Map<number, IntervalMerger>();
let t0 = 0;
let calls = 0;
let cpuMs = 0;
let longestOkGapMs = 0;
/** Workers that died after starting without reporting done (a signal or an error exit): never restarted. */
let crashes = 0;
let doneWorkers = 0;
let closed = 0;
let goMsg: GoMessage | null = null;
let stopRequested = false;
// Set when our owner (the sandbox ending the pod) sent SIGTERM: an unfinished start is then no error.
let terminating = false;
let forwardTimer: NodeJS.Timeout | undefined;
let ended = false;
/** Per worker: the last second it has shipped everything of (-1: none yet; Infinity: done or gone). */
const flushed: number[] = [];
let progressed = -1;

function send(msg: FromPod, then?: () => void): void {
  if (!process.connected) return void then?.();
  process.send!(msg, undefined, undefined, () => then?.());
}

function toWorkers(msg: ToWorker): void {
  // A worker may exit between the check and the write: the callback takes the EPIPE instead of
  // an unhandled 'error' event.
  for (const w of workers) if (w.connected) w.send(msg, (err) => void err);
}

function forward(upTo: number): void {
  for (const [second, merger] of [...merging].sort((a, b) => a[0] - b[0])) {
    if (second > upTo) continue;
    merging.delete(second);
    send({ type: 'interval', data: merger.toData() });
    merger.destroy();
  }
}

function scheduleForward(): void {
  const second = Math.floor((Date.now() - t0 - FORWARD_GRACE_MS) / 1000);
  const next = t0 + (second + 1) * 1000 + FORWARD_GRACE_MS;
  forwardTimer = setTimeout(
    () => {
      forward(second);
      maybeProgress();
      scheduleForward();
    },
    Math.max(0, next - Date.now()) + 1,
  );
}

/**
 * Reports the last second every worker has shipped (and forwards it): quiet seconds (a paced
 * bystander, a worker in backoff) carry no data, and the generator need not wait for them. A worker
 * starved of CPU holds it back until its own flush arrives.
 */
function maybeProgress(): void {
  if (!goMsg || ended) return;
  const byClock = Math.floor((Date.now() - t0 - FORWARD_GRACE_MS) / 1000);
  const complete = Math.min(byClock, ...flushed);
  if (complete <= progressed) return;
  progressed = complete;
  forward(complete);
  send({ type: 'progress', second: complete });
}

function accept(data: IntervalData): void {
  let merger = merging.get(data.second);
  if (!merger) merging.set(data.second, (merger = new IntervalMerger(data.second)));
  merger.add(data);
}

// All workers done (or gone): forward everything and report; the generator stops us afterwards.
function end(): void {
  if (ended) return;
  ended = true;
  clearTimeout(forwardTimer);
  forward(Number.MAX_SAFE_INTEGER);
  send({ type: 'done', calls, cpuMs, longestOkGapMs, crashes });
}

function workerGone(): void {
  doneWorkers++;
  if ((goMsg || stopRequested) && doneWorkers >= workers.length) end();
}

// The native worker is a binary of its own: spawned (fork + exec of a small static program) with
// the same IPC channel node gives a forked script, so every message below is the same.
const nativeArgs = config.worker.client === 'native' ? nativeWorkerArgs(config.worker) : null;

function startWorker(): ChildProcess {
  const stdio: ['ignore', 'inherit', 'inherit', 'ipc'] = ['ignore', 'inherit', 'inherit', 'ipc'];
  if (nativeArgs) return spawn(config.workerBundle, nativeArgs, { env: workerEnv, stdio });
  return fork(config.workerBundle, [JSON.stringify(config.worker)], { execArgv: config.workerExecArgv, env: workerEnv, stdio });
}

function startWorkers(): Promise<number[]> {
  const pids: Promise<number>[] = [];
  for (let i = 0; i < config.workers; i++) {
    const w = startWorker();
    workers.push(w);
    flushed.push(-1);
    if (config.workerNice !== null && w.pid !== undefined) {
      try {
        setPriority(w.pid, config.workerNice);
      } catch (err) {
        // Raising a nice value needs no privilege; a failure is reported once, and the run goes on.
        if (i === 0) process.stderr.write(`attestorm pod process: cannot set the workers' nice value ${config.workerNice}: ${(err as Error).message}\n`);
      }
    }
    w.on('error', () => {}); // spawn failures surface as 'exit' before ready
    let counted = false;
    let reportedDone = false;
    let wasReady = false;
    const gone = () => {
      if (counted) return;
      counted = true;
      flushed[i] = Infinity;
      workerGone();
    };
    pids.push(
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`worker ${i} not ready within ${config.startTimeoutMs} ms`)), config.startTimeoutMs);
        w.once('exit', (code, signal) => {
          clearTimeout(timer);
          // Killed by a signal while starting: the pod is being ended (churn, stop), not failing.
          if (signal === 'SIGTERM' || signal === 'SIGKILL') terminating = true;
          reject(new Error(`worker ${i} exited before ready (${signal ?? code})`));
        });
        w.on('message', (msg: FromWorker) => {
          switch (msg.type) {
            case 'ready':
              clearTimeout(timer);
              wasReady = true;
              resolve(msg.pid);
              break;
            case 'interval':
              accept(msg.data);
              break;
            case 'flushed':
              flushed[i] = Math.max(flushed[i]!, msg.second);
              maybeProgress();
              break;
            case 'done':
              reportedDone = true;
              calls += msg.calls;
              cpuMs += msg.cpuMs;
              longestOkGapMs = Math.max(longestOkGapMs, msg.longestOkGapMs);
              gone();
              break;
            case 'fatal':
              process.stderr.write(`attestorm worker ${w.pid}: ${msg.message}\n`);
              break;
          }
        });
      }),
    );
    // A worker that dies on its own (a crash, an error exit) is counted and reported once; our own
    // SIGTERM/SIGKILL (the pod ending) is not a crash.
    w.once('exit', (code, signal) => {
      if (!wasReady || reportedDone || signal === 'SIGTERM' || signal === 'SIGKILL' || (signal === null && code === 0)) return;
      crashes++;
      process.stderr.write(`attestorm worker ${w.pid}: crashed (${signal ?? `exit code ${code}`}); counted, not restarted\n`);
    });
    // 'close' comes after the worker's last IPC message; 'exit' may come before it.
    w.once('close', () => {
      closed++;
      gone();
    });
  }
  return Promise.all(pids);
}

function killWorkers(signal: NodeJS.Signals): void {
  for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill(signal);
}

function shutdown(): void {
  terminating = true;
  // SIGTERM the workers so they ship their last partial second, then make sure none outlives us.
  killWorkers('SIGTERM');
  const hard = setTimeout(() => {
    killWorkers('SIGKILL');
    end();
    process.exit(0);
  }, STOP_GRACE_MS);
  const poll = setInterval(() => {
    if (closed >= workers.length) {
      clearInterval(poll);
      clearTimeout(hard);
      end();
      // Give the last messages time to reach the pipe before exiting.
      setTimeout(() => process.exit(0), 50);
    }
  }, 20);
}

// The generator died: nothing to report to; take the workers down with us.
process.on('disconnect', () => {
  killWorkers('SIGKILL');
  process.exit(0);
});
process.on('SIGTERM', shutdown);
process.on('message', (msg: ToPod) => {
  if (msg.type === 'go') {
    goMsg = msg;
    t0 = msg.t0;
    toWorkers(msg);
    scheduleForward();
    if (doneWorkers >= workers.length) end();
  } else if (msg.type === 'stop') {
    stopRequested = true;
    toWorkers({ type: 'stop' });
    if (doneWorkers >= workers.length) end();
  }
});

startWorkers().then(
  (workerPids) => send({ type: 'ready', pid: process.pid, workerPids }),
  (err: Error) => {
    if (terminating) {
      killWorkers('SIGKILL');
      return void setTimeout(() => process.exit(0), 50);
    }
    send({ type: 'fatal', message: err.message }, () => {
      killWorkers('SIGKILL');
      process.exit(1);
    });
  },
);
