// A load worker's loop: one OS process (so the agent sees one PID per worker) that calls the
// Workload API one call at a time until the run's end time, and reports each second's histograms
// and counters to its pod process. Started from one entry per client transport (worker-main-*.ts),
// so each worker bundle holds only the transport it uses.
import { performance } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import type { FromWorker, GoMessage, IntervalData, LoadMethod, ToWorker, WorkerConfig } from './messages.js';
import { OkGapTracker } from './ok-gap.js';
import { Pacer, backoffDelayMs, classify, latencyUs, makePicker } from './policy.js';
import { SecondRecorder } from './recorder.js';
import type { Transport, TransportFactory } from './transport.js';

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

  const loop = new CallLoop(config, makeTransport);
  process.on('message', (msg: ToWorker) => {
    if (msg.type === 'go') loop.start(msg);
    else if (msg.type === 'stop') loop.stop();
  });
  process.on('SIGTERM', () => loop.stop());

  send({ type: 'ready', pid: process.pid });
}

/**
 * One call at a time from the release to the end time (or a stop, or maxCalls), each recorded in
 * its second against the time it was meant to start; then the last second and 'done'.
 */
class CallLoop {
  readonly #config: WorkerConfig;
  readonly #recorder = new SecondRecorder();
  readonly #caller: Transport;
  readonly #pick: (r: number) => LoadMethod;
  readonly #okGaps = new OkGapTracker();
  readonly #heap = heapTrimmer();
  #t0 = 0;
  #lastSecond = 0;
  #pacer!: Pacer;
  #calls = 0;
  #cpuAtGo: NodeJS.CpuUsage | null = null;
  #failures = 0;
  #inFlight = false;
  #stopping = false;
  #finished = false;
  #flushTimer: NodeJS.Timeout | undefined;
  #endTimer: NodeJS.Timeout | undefined;

  constructor(config: WorkerConfig, makeTransport: TransportFactory) {
    this.#config = config;
    this.#caller = makeTransport(
      config.socket,
      config.connection,
      config.deadlineMs,
      config.audience,
      config.methods.some(([m]) => m === 'ValidateJWTSVID'),
    );
    this.#pick = makePicker(config.methods);
  }

  #currentSecond(): number {
    return Math.max(0, Math.min(this.#lastSecond, Math.floor((Date.now() - this.#t0) / 1000)));
  }

  #ship(data: IntervalData | null): void {
    if (data) send({ type: 'interval', data });
  }

  // Seconds with calls are shipped as soon as a call lands in the next one; this timer covers
  // seconds that end while a call is stuck, so the pod process never waits on a quiet worker.
  #scheduleFlush(): void {
    const next = this.#t0 + (this.#currentSecond() + 1) * 1000;
    this.#flushTimer = setTimeout(
      () => {
        if (this.#recorder.second >= 0 && this.#recorder.second < this.#currentSecond()) this.#ship(this.#recorder.take());
        // Seconds before the current one are all shipped now (a second is shipped when a call lands
        // in a later one, or just above): say so, calls or not, so the pod need not wait for us.
        if (this.#currentSecond() > 0) send({ type: 'flushed', second: this.#currentSecond() - 1 });
        this.#heap.trim();
        if (!this.#finished) this.#scheduleFlush();
      },
      Math.max(0, next - Date.now()) + 5,
    );
  }

  start(go: GoMessage): void {
    this.#heap.measure();
    this.#cpuAtGo = process.cpuUsage();
    this.#t0 = go.t0;
    this.#okGaps.start(go.t0, go.endAt);
    this.#lastSecond = Math.max(0, Math.ceil((go.endAt - go.t0) / 1000) - 1);
    this.#pacer = new Pacer(this.#config.rate, performance.now() + Math.max(0, go.t0 - Date.now()));
    this.#endTimer = setTimeout(() => this.stop(), Math.max(0, go.endAt - Date.now()));
    this.#scheduleFlush();
    const wait = go.t0 - Date.now();
    if (wait > 0) setTimeout(() => this.#issue(), wait);
    else this.#issue();
  }

  #issue(): void {
    if (this.#stopping || (this.#config.maxCalls !== null && this.#calls >= this.#config.maxCalls)) return this.#finish();
    const now = performance.now();
    const intendedAt = this.#pacer.next(now);
    if (intendedAt > now + 0.5) setTimeout(() => this.#fire(intendedAt), intendedAt - now);
    else this.#fire(intendedAt);
  }

  #fire(intendedAt: number): void {
    if (this.#stopping) return this.#finish();
    this.#inFlight = true;
    let sync = true;
    this.#caller.call(this.#pick(Math.random()), (code, details) => {
      this.#inFlight = false;
      this.#calls++;
      const outcome = classify(code, details);
      this.#ship(this.#recorder.record(this.#currentSecond(), outcome, code, latencyUs(intendedAt, performance.now())));
      let delay = 0;
      if (outcome === 'ok') {
        this.#failures = 0;
        this.#okGaps.ok(Date.now());
      } else if (this.#config.retry === 'backoff') {
        delay = backoffDelayMs(++this.#failures);
        this.#pacer.skipUntil(performance.now() + delay);
      }
      if (delay > 0) setTimeout(() => this.#issue(), delay);
      // A failure reported synchronously (e.g. a closed channel) must not recurse on the stack.
      else if (sync) setImmediate(() => this.#issue());
      else this.#issue();
    });
    sync = false;
  }

  stop(): void {
    if (this.#stopping) return;
    this.#stopping = true;
    // A call in flight is bounded by its deadline; its answer still counts.
    if (!this.#inFlight) this.#finish();
  }

  #finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    clearTimeout(this.#flushTimer);
    clearTimeout(this.#endTimer);
    this.#ship(this.#recorder.take());
    this.#caller.close();
    const cpu = this.#cpuAtGo ? process.cpuUsage(this.#cpuAtGo) : { user: 0, system: 0 };
    // The stretch since the last success runs to the end of the phase (or to an early stop).
    const longestOkGapMs = this.#okGaps.finish(Date.now());
    send({ type: 'done', calls: this.#calls, cpuMs: (cpu.user + cpu.system) / 1000, longestOkGapMs }, () => process.exit(0));
  }
}
