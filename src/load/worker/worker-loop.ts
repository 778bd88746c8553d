// A load worker's loop: one OS process (so the agent sees one PID per worker) that calls the
// Workload API one call at a time until the run's end time, and reports each second's histograms
// and counters to its pod process. Started from one entry per client transport (worker-main-*.ts),
// so each worker bundle holds only the transport it uses.
import { performance } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import type { FromWorker, GoMessage, IntervalData, ToWorker, WorkerConfig } from './messages.js';
import { OkGapTracker } from './ok-gap.js';
import { Pacer, backoffDelayMs, classify, latencyUs, makePicker } from './policy.js';
import { SecondRecorder } from './recorder.js';
import type { TransportFactory } from './transport.js';

// V8 lets the old generation grow to tens of MiB of garbage before a full collection — per-call
// connections produce plenty, and their native parts (nghttp2 sessions, socket buffers) are freed
// only when their JS wrappers are collected — and the agent's node then counts hundreds of such
// workers. So once a second, when the heap has grown more than HEAP_SLACK_BYTES past the live heap
// measured at the start, a full GC (a few ms) gives pages back. Relative to the start: an h2
// worker's live heap is ~4 MiB, a grpc-js worker's about twice that.
const HEAP_SLACK_BYTES = 3 * 2 ** 20;

function heapTrimmer(): { measure(): void; trim(): void } {
  const collect = (globalThis as { gc?: () => void }).gc;
  let heapBound = Infinity;

  return {
    /** After start-up: the live heap the bound is measured from. */
    measure(): void {
      if (!collect) return;
      collect();
      heapBound = getHeapStatistics().used_heap_size + HEAP_SLACK_BYTES;
    },
    /** Once a second: a full GC when the heap has outgrown the bound. */
    trim(): void {
      if (collect && getHeapStatistics().total_heap_size > heapBound) collect();
    },
  };
}

/** A message to the pod process; `then` runs once it is sent (or at once without a channel). */
function send(msg: FromWorker, then?: () => void): void {
  if (!process.connected) return void then?.();
  process.send!(msg, undefined, undefined, () => then?.());
}

export function runWorker(makeTransport: TransportFactory): void {
  const config = JSON.parse(process.argv[2] ?? '{}') as WorkerConfig;
  if (!process.send) {
    process.stderr.write('attestorm load worker: must be started with an IPC channel\n');
    process.exit(2);
  }

  // The pod process owns us: when it goes away (crash, SIGKILL), so do we.
  process.on('disconnect', () => process.exit(0));

  const recorder = new SecondRecorder();
  const caller = makeTransport(config.socket, config.connection, config.deadlineMs, config.audience, config.methods.some(([m]) => m === 'ValidateJWTSVID'));
  const pick = makePicker(config.methods);

  let t0 = 0;
  let lastSecond = 0;
  let pacer: Pacer;
  let calls = 0;
  let cpuAtGo: NodeJS.CpuUsage | null = null;
  let failures = 0;
  const okGaps = new OkGapTracker();
  let inFlight = false;
  let stopping = false;
  let finished = false;
  let flushTimer: NodeJS.Timeout | undefined;
  let endTimer: NodeJS.Timeout | undefined;

  function currentSecond(): number {
    return Math.max(0, Math.min(lastSecond, Math.floor((Date.now() - t0) / 1000)));
  }

  const heap = heapTrimmer();

  function ship(data: IntervalData | null): void {
    if (data) send({ type: 'interval', data });
  }

  // Seconds with calls are shipped as soon as a call lands in the next one; this timer covers
  // seconds that end while a call is stuck, so the pod process never waits on a quiet worker.
  function scheduleFlush(): void {
    const next = t0 + (currentSecond() + 1) * 1000;
    flushTimer = setTimeout(() => {
      if (recorder.second >= 0 && recorder.second < currentSecond()) ship(recorder.take());
      // Seconds before the current one are all shipped now (a second is shipped when a call lands
      // in a later one, or just above): say so, calls or not, so the pod need not wait for us.
      if (currentSecond() > 0) send({ type: 'flushed', second: currentSecond() - 1 });
      heap.trim();
      if (!finished) scheduleFlush();
    }, Math.max(0, next - Date.now()) + 5);
  }

  function start(go: GoMessage): void {
    heap.measure();
    cpuAtGo = process.cpuUsage();
    t0 = go.t0;
    okGaps.start(go.t0, go.endAt);
    lastSecond = Math.max(0, Math.ceil((go.endAt - go.t0) / 1000) - 1);
    pacer = new Pacer(config.rate, performance.now() + Math.max(0, go.t0 - Date.now()));
    endTimer = setTimeout(stop, Math.max(0, go.endAt - Date.now()));
    scheduleFlush();
    const wait = go.t0 - Date.now();
    if (wait > 0) setTimeout(issue, wait);
    else issue();
  }

  function issue(): void {
    if (stopping || (config.maxCalls !== null && calls >= config.maxCalls)) return finish();
    const now = performance.now();
    const intendedAt = pacer.next(now);
    if (intendedAt > now + 0.5) setTimeout(fire, intendedAt - now, intendedAt);
    else fire(intendedAt);
  }

  function fire(intendedAt: number): void {
    if (stopping) return finish();
    inFlight = true;
    let sync = true;
    caller.call(pick(Math.random()), (code, details) => {
      inFlight = false;
      calls++;
      const outcome = classify(code, details);
      ship(recorder.record(currentSecond(), outcome, code, latencyUs(intendedAt, performance.now())));
      let delay = 0;
      if (outcome === 'ok') {
        failures = 0;
        okGaps.ok(Date.now());
      } else if (config.retry === 'backoff') {
        delay = backoffDelayMs(++failures);
        pacer.skipUntil(performance.now() + delay);
      }
      if (delay > 0) setTimeout(issue, delay);
      // A failure reported synchronously (e.g. a closed channel) must not recurse on the stack.
      else if (sync) setImmediate(issue);
      else issue();
    });
    sync = false;
  }

  function stop(): void {
    if (stopping) return;
    stopping = true;
    // A call in flight is bounded by its deadline; its answer still counts.
    if (!inFlight) finish();
  }

  function finish(): void {
    if (finished) return;
    finished = true;
    clearTimeout(flushTimer);
    clearTimeout(endTimer);
    ship(recorder.take());
    caller.close();
    const cpu = cpuAtGo ? process.cpuUsage(cpuAtGo) : { user: 0, system: 0 };
    // The stretch since the last success runs to the end of the phase (or to an early stop).
    const longestOkGapMs = okGaps.finish(Date.now());
    send({ type: 'done', calls, cpuMs: (cpu.user + cpu.system) / 1000, longestOkGapMs }, () => process.exit(0));
  }

  process.on('message', (msg: ToWorker) => {
    if (msg.type === 'go') start(msg);
    else if (msg.type === 'stop') stop();
  });
  process.on('SIGTERM', stop);

  send({ type: 'ready', pid: process.pid });
}
