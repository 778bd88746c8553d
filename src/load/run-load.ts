// runLoad: starts one pod process per pod (through the sandbox, so each sits in its pod's cgroup),
// each forking its workers; starts them together, merges their seconds as they arrive, and stops
// by itself at the end time, at maxCalls, or when aborted — returning whatever was collected.
// Bystander pods, when asked for, run beside the storm with their own options and are counted apart.
// While it runs the storm can grow: a wave of extra pods (a burst fault) joins and leaves on command.
import { accessSync, chmodSync, constants } from 'node:fs';
import { availableParallelism } from 'node:os';
import type { ChildProcess } from 'node:child_process';
import { cpuQuotaCores } from '../cgroup/index.js';
import { ConfigError, RunError, TimeoutError } from '../errors.js';
import type { LatencySummary, LoadSample, Outcome } from '../contract/index.js';
import { LoadAggregator, type PodTotals } from './aggregator.js';
import type { ResolvedBystanderLoadOptions } from './bystanders-schema.js';
import { bystanderRunOf, toBystanderSecond, type BystanderRun, type LoadSampleWithBystanders } from './bystanders-summary.js';
import { WORKER_ENV, WORKER_EXEC_ARGV, WORKER_NICE, loadBundles } from './bundle.js';
import { checkLoadCapacity, loadPlanSize } from './capacity.js';
import { GeneratorCpuMeter, type GeneratorCpuSecond } from './generator-cpu.js';
import { summarizeDecoded } from './histograms.js';
import { samplePss, type MemoryStats } from './memory.js';
import { validateLoadOptions, type LoadOptions, type ResolvedLoadOptions } from './options.js';
import { LiveStorm } from './live-storm.js';
import { PodHandle } from './pod-handle.js';
import { waveSizes, type StormControl, type StormWave, type StormWaveEnd } from './storm-wave.js';
import { localPodHost, type LoadPod, type PodHost } from './pod-host.js';
import { OUTCOMES, type LoadClient, type LoadMethod, type PodConfig } from './worker/messages.js';

export interface LoadSummary {
  startedAt: string;
  /** Length of the load phase actually run (shorter when aborted or stopped by maxCalls). */
  durationMs: number;
  totals: { calls: number; ok: number; rateLimited: number; deadlineExceeded: number; error: number; byCode: Record<string, number> };
  rps: { ok: number; rateLimited: number; deadlineExceeded: number; error: number };
  latency: Partial<Record<Outcome, LatencySummary>>;
  /** Whole-run encoded histograms (microseconds) per outcome. */
  histograms: Partial<Record<Outcome, string>>;
  series: LoadSample[];
  /** Per pod UID. */
  pods: Record<string, PodTotals>;
  /** PSS of the workers, sampled once mid-run. */
  workerMemoryBytes: MemoryStats | null;
  /** Worker processes started (replacement pods and a burst's extra pods included). */
  workers: number;
  /** The workers' gRPC client (the one that ran: h2 when native was asked for but unavailable). */
  client: LoadClient;
  /** Why the native client was asked for but h2 ran instead; absent when the asked-for client ran. */
  clientFallback?: string;
  /** Workers that died without reporting done (a crash, an error exit): counted, never restarted. */
  workerCrashes: number;
  /**
   * Mean CPU over the load phase, in cores: the generator's pod processes and workers (storm and
   * bystanders), this process, the machine; each second's is on its LoadSample as `cpu`.
   */
  cpu: GeneratorCpuSecond | null;
  /** CPU seconds (user+system) the workers spent in the load phase, as they reported it on exit. */
  workerCpuSeconds: number;
  /** True when the run ended early because the signal was aborted. */
  aborted: boolean;
  /**
   * Calls (storm and bystanders) whose data reached the generator after their second had been
   * emitted, so the series counts them in a later second, and the most seconds one was moved by.
   */
  late: { calls: number; maxSeconds: number };
  /**
   * The bystander pods' run, when options.bystanders was given. Everything above is the storm's
   * alone; each LoadSample of the series then carries the bystanders' second as `bystanders`.
   */
  bystanders?: BystanderRun;
}

export interface LoadEnv {
  /** Where pods run; without one, pods are plain local processes (no cgroups, no pod identity). */
  sandbox?: PodHost<any>;
  /** Each second of the storm, with the bystanders' as `bystanders` when there are bystanders. */
  onSecond?: (sample: LoadSampleWithBystanders) => void;
  /**
   * Called once, with Date.now() of the moment the workers are released (second 0 starts then) and
   * the handle that adds extra storm workers while the load runs (burst faults).
   */
  onGo?: (t0: number, storm: StormControl) => void;
  signal?: AbortSignal;
}

// A second is emitted this long after it ends, so pod processes (which forward 250 ms after the
// second) have had their turn even on a busy machine.
const EMIT_GRACE_MS = 700;
// On a saturated machine pod processes forward late (they get little CPU next to a storm). A second
// waits until every running pod has reported it, but no longer than this past its grace time.
const MAX_STRAGGLE_MS = 3000;
const TICK_MS = 250;
// After the end time: workers finish the call in flight (≤ deadline), then report.
const END_GRACE_MS = 3000;
// After a stop (abort, maxCalls): how long pods get to ship their last data.
const STOP_WAIT_MS = 3000;

/**
 * Start timeout per pod: forking hundreds of node processes takes a while. Each worker's start-up
 * costs ~170 ms of CPU here (bench/workers.ts), spread over the CPUs this process may use — the
 * cpuset's (availableParallelism(); with the agent isolated on a CPU of its own the pods get the
 * others) or a CPU quota's (--cpu-budget, a container), whichever is smaller. 600 ms per worker
 * leaves room for a machine that is busy besides: a slow start is not a failed one.
 */
export function podStartTimeoutMs(workersPerPod: number, totalWorkers: number, cpus = Math.min(availableParallelism(), cpuQuotaCores() ?? Infinity)): number {
  return 30_000 + Math.ceil((600 * Math.max(workersPerPod, totalWorkers)) / Math.max(0.5, cpus));
}

function perWorkerMaxCalls(opts: ResolvedLoadOptions): number | null {
  return opts.maxCalls === undefined ? null : Math.max(1, Math.ceil(opts.maxCalls / (opts.pods * opts.workersPerPod)));
}

export async function runLoad(input: LoadOptions, env: LoadEnv = {}): Promise<LoadSummary> {
  const opts = validateLoadOptions(input);
  const bys: ResolvedBystanderLoadOptions | null = opts.bystanders ?? null;
  const host: PodHost<any> = env.sandbox ?? localPodHost(opts.pods, bys?.pods ?? 0);
  if ((host.bystanderPods ?? 0) !== (bys?.pods ?? 0)) {
    throw new ConfigError(
      `load.bystanders.pods is ${bys?.pods ?? 0} but the sandbox hosts ${host.bystanderPods ?? 0} bystander pods: create the sandbox with bystanders: { pods: ${bys?.pods ?? 0} }`,
    );
  }
  const built = await loadBundles(opts.client);
  if (built.fallback) process.stderr.write(`attestorm load: ${built.fallback}\n`);
  // Refused before any pod starts: the machine must hold the workers of the client that will run.
  checkLoadCapacity(loadPlanSize({ ...opts, client: built.client }));
  const share = (file: string) => host.shareWithPods?.(file) ?? file;
  const bundles = { pod: share(built.pod), worker: share(built.worker) };
  // A shared copy of the native binary must stay executable for the pods' uid.
  if (built.client === 'native' && bundles.worker !== built.worker) ensureExecutable(bundles.worker);
  const bystanderWorkers = bys ? bys.pods * bys.workersPerPod : 0;
  const startTimeoutMs = podStartTimeoutMs(Math.max(opts.workersPerPod, bys?.workersPerPod ?? 0), opts.pods * opts.workersPerPod + bystanderWorkers);
  const { podConfig, bystanderConfig } = podConfigs({ ...opts, client: built.client }, bundles, startTimeoutMs);

  const agg = new LoadAggregator();
  // Every pod process and worker of the run, while it lives (a finished pod's CPU stays counted).
  const cpuMeter = new GeneratorCpuMeter(() => handles.flatMap((h) => (h.isFinished ? [] : [...(h.child.pid !== undefined ? [h.child.pid] : []), ...h.workerPids])));
  const bysAgg = bys ? new LoadAggregator() : null;
  const handles: PodHandle[] = [];
  const bystanderHandles = new Set<PodHandle>();
  /** Workers per pod process (a burst's pods may differ from workersPerPod). */
  const workersOf = new Map<PodHandle, number>();
  /** Storm pods told to go, and when each joined and left (the live pods/workers series). */
  const calling = new Set<PodHandle>();
  const live = new LiveStorm();
  const stormHandles = () => handles.filter((h) => !bystanderHandles.has(h));
  /** The latest second each pod has reported, for emitting a second once all running pods are in. */
  const reported = new Map<PodHandle, number>();
  let go: { type: 'go'; t0: number; endAt: number } | null = null;
  let stopping = false;
  let wake: () => void = () => {};
  const poke = () => wake();
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      wake = resolve;
      setTimeout(resolve, ms);
    });

  /** Sends go to a ready pod, once; a storm pod counts as live from then until it finishes. */
  const startCalling = (h: PodHandle) => {
    if (!go || calling.has(h)) return;
    calling.add(h);
    // A pod joining mid-run must not hold back the seconds before it existed.
    if (!reported.has(h)) reported.set(h, Math.max(-1, Math.floor((Date.now() - go.t0) / 1000) - 1));
    h.go(go);
    if (bystanderHandles.has(h)) return;
    const workers = workersOf.get(h) ?? 0;
    live.join(Math.max(Date.now(), go.t0), workers);
    void h.finished.then(() => live.leave(Date.now(), workers));
  };

  const spawnPod = (pod: LoadPod, workers?: number): PodHandle => {
    const bystander = pod.group === 'bystanders';
    if (bystander && !bystanderConfig) throw new ConfigError(`pod ${pod.name} is a bystander pod but load.bystanders is not set`);
    const groupAgg = bystander ? bysAgg! : agg;
    const base = bystander ? bystanderConfig! : workers === undefined ? podConfig : { ...podConfig, workers };
    const config: PodConfig = { ...base, workerNice: pod.cpuGroup ? WORKER_NICE : null };
    const child = host.spawnInPod(pod, process.execPath, [bundles.pod, JSON.stringify(config)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const progressed = (second: number) => reported.set(handle, Math.max(reported.get(handle) ?? -1, second));
    const handle = new PodHandle(
      pod,
      child,
      startTimeoutMs,
      // A second's data comes in parts (the pod forwards what its workers shipped so far); only the
      // pod's progress message says every worker's part of it is in.
      (p, data) => {
        groupAgg.add(p, data);
        if (opts.maxCalls !== undefined && agg.calls() >= opts.maxCalls) stopAll();
      },
      progressed,
    );
    handles.push(handle);
    workersOf.set(handle, config.workers);
    if (bystander) bystanderHandles.add(handle);
    groupAgg.notePod(pod);
    // Replacement pods (churn) and a burst's pods join the running load as soon as their workers are up.
    handle.ready.then(() => {
      if (go && !stopping) startCalling(handle);
      else if (go && stopping) handle.stop();
    }, poke);
    void handle.finished.then(poke);
    return handle;
  };
  const podMain = (pod: LoadPod): ChildProcess => spawnPod(pod).child;

  const storm: StormControl = {
    async addWorkers(workers: number): Promise<StormWave> {
      if (!host.addPods || !host.endPods) throw new RunError('load: this pod host cannot add storm pods while the load runs');
      if (!Number.isInteger(workers) || workers < 1) throw new RunError(`load: extra storm workers must be a positive integer, got ${workers}`);
      if (stopping || !go) throw new RunError('load: the load phase is not running');
      const asked = Date.now();
      const sizes = waveSizes(workers, opts.workersPerPod);
      const wave: PodHandle[] = [];
      const pods = await host.addPods(sizes.length, (pod) => {
        const h = spawnPod(pod, sizes[wave.length]);
        wave.push(h);
        return h.child;
      });
      // Forking the workers takes a while (seconds on a busy machine): the wave returns at once and
      // its window stays the schedule's; a pod still starting at the end is ended with the others.
      const readyAt = wave.map((h) => h.ready.then(() => Date.now(), () => null));
      return {
        pods: pods.length,
        workers: sizes.reduce((a, b) => a + b, 0),
        podUids: pods.map((p) => p.uid),
        async stop(): Promise<StormWaveEnd> {
          const endedAt = Date.now();
          await host.endPods!(pods);
          const called = (await Promise.all(readyAt)).filter((t): t is number => t !== null && t <= endedAt);
          return {
            calling: called.length,
            readyMs: called.length ? Math.max(...called) - asked : null,
            failures: wave.flatMap((h) => (h.failure ? [h.failure.message] : [])),
          };
        },
      };
    },
  };

  function stopAll(): void {
    if (stopping) return;
    stopping = true;
    for (const h of handles) h.stop();
    poke();
  }

  const onAbort = () => stopAll();
  env.signal?.addEventListener('abort', onAbort, { once: true });
  const timers: NodeJS.Timeout[] = [];
  let memory: MemoryStats | null = null;
  let memorySampling: Promise<void> | null = null;
  const startedAt = new Date();
  let loadEndedAt = 0;

  try {
    await host.startPods(podMain);
    if (env.signal?.aborted) stopAll();
    await waitPodsReady(handles, startTimeoutMs, () => stopping, pause);

    const t0 = Date.now() + 50;
    const endAt = t0 + opts.durationMs;
    go = { type: 'go', t0, endAt };
    startedAt.setTime(t0);
    if (!stopping) for (const h of handles) if (h.isReady) startCalling(h);
    cpuMeter.start(t0);
    env.onGo?.(t0, storm);

    const emit = (upTo: number) => {
      for (const s of emitSeconds(upTo)) env.onSecond?.(s);
    };
    const lastSecond = Math.ceil(opts.durationMs / 1000) - 1;
    // The last second is emitted only at the end: calls in flight at the end time land in it.
    // Otherwise a second goes out once every running pod has reported it (its workers' data has
    // arrived), or MAX_STRAGGLE_MS after its grace time at the latest.
    const tick = () => {
      const now = Date.now();
      const byClock = Math.min(lastSecond - 1, Math.floor((now - t0 - EMIT_GRACE_MS) / 1000));
      const forced = Math.min(lastSecond - 1, Math.floor((now - t0 - EMIT_GRACE_MS - MAX_STRAGGLE_MS) / 1000));
      let byPods = byClock;
      for (const h of handles) if (h.isReady && !h.isFinished) byPods = Math.min(byPods, reported.get(h) ?? -1);
      const k = Math.max(byPods, forced);
      if (k >= 0) emit(k);
      if (k < lastSecond - 1 && !stopping) timers.push(setTimeout(tick, TICK_MS));
    };
    timers.push(setTimeout(tick, t0 + 1000 + EMIT_GRACE_MS - Date.now()));
    timers.push(
      setTimeout(() => {
        memorySampling = samplePss(stormHandles().filter((h) => !h.isFinished).flatMap((h) => h.workerPids)).then((m) => void (memory = m));
      }, Math.max(0, t0 + opts.durationMs / 2 - Date.now())),
    );
    timers.push(setTimeout(poke, Math.max(0, endAt - Date.now())));

    // Wait until the end time has passed (or a stop) and every pod still around has reported.
    const hardEnd = endAt + Math.max(opts.deadlineMs, bys?.deadlineMs ?? 0) + END_GRACE_MS;
    let stopDeadline = Infinity;
    for (;;) {
      const now = Date.now();
      if (stopping && stopDeadline === Infinity) stopDeadline = now + STOP_WAIT_MS;
      if ((now >= endAt || stopping) && handles.every((h) => h.isFinished)) break;
      if (now >= hardEnd || now >= stopDeadline) break;
      await pause(250);
    }
    loadEndedAt = Math.min(Date.now(), endAt);
  } finally {
    cpuMeter.stop();
    for (const t of timers) clearTimeout(t);
    env.signal?.removeEventListener('abort', onAbort);
    stopping = true;
    await host.stopPods();
    // Pods spawned by a host that does not stop them (defensive): never leave a process behind.
    for (const h of handles) if (h.child.exitCode === null && h.child.signalCode === null) h.child.kill('SIGKILL');
    await memorySampling;
  }

  for (const s of emitSeconds(Math.max(agg.lastSecond(), bysAgg?.lastSecond() ?? -1))) env.onSecond?.(s);
  const durationMs = Math.max(1, loadEndedAt - startedAt.getTime());
  const late = { calls: agg.lateCalls + (bysAgg?.lateCalls ?? 0), maxSeconds: Math.max(agg.maxLateSeconds, bysAgg?.maxLateSeconds ?? 0) };
  const summary = stormSummary(agg, { ...opts, client: built.client }, { startedAt, durationMs, memory, storm: stormHandles(), workers: stormHandles().reduce((n, h) => n + (workersOf.get(h) ?? 0), 0), aborted: env.signal?.aborted ?? false, late });
  if (built.fallback) summary.clientFallback = built.fallback;
  summary.cpu = cpuMeter.means();
  if (bys && bysAgg) summary.bystanders = bystanderRunOf(bysAgg, [...bystanderHandles].map((h) => h.longestOkGapMs), bys.workersPerPod, durationMs);
  agg.destroy();
  bysAgg?.destroy();
  return summary;

  /** The storm's seconds up to `upTo`, each with the bystanders' same second attached. */
  function emitSeconds(upTo: number): LoadSampleWithBystanders[] {
    const seconds: LoadSampleWithBystanders[] = agg.emitUpTo(upTo);
    for (const s of seconds) {
      const { pods, workers } = live.peak(startedAt.getTime() + s.t, startedAt.getTime() + s.t + 1000);
      s.stormPods = pods;
      s.stormWorkers = workers;
      const cpu = cpuMeter.second(Math.round(s.t / 1000));
      if (cpu) s.cpu = { ...cpu };
    }
    if (bysAgg) {
      const byT = new Map(bysAgg.emitUpTo(upTo).map((s) => [s.t, s]));
      for (const s of seconds) {
        const b = byT.get(s.t);
        if (b) s.bystanders = toBystanderSecond(b);
      }
    }
    return seconds;
  }
}

function ensureExecutable(file: string): void {
  try {
    accessSync(file, constants.X_OK);
  } catch {
    chmodSync(file, 0o755);
  }
}

/**
 * What a storm pod is told to run: its workers' call loop from the load options. Local pods and
 * kind's generator pods both start from it; maxCalls bounds each worker (null: time alone).
 */
export function podConfigFor(opts: ResolvedLoadOptions, workerBundle: string, startTimeoutMs: number, maxCalls: number | null): PodConfig {
  return {
    worker: {
      socket: opts.socket,
      client: opts.client,
      connection: opts.connection,
      rate: opts.rate ?? null,
      deadlineMs: opts.deadlineMs,
      retry: opts.retry,
      methods: Object.entries(opts.methods).filter(([, w]) => (w ?? 0) > 0) as Array<[LoadMethod, number]>,
      audience: opts.audience,
      maxCalls,
    },
    workers: opts.workersPerPod,
    workerBundle,
    startTimeoutMs,
    workerExecArgv: WORKER_EXEC_ARGV,
    workerEnv: { ...WORKER_ENV },
    workerNice: null,
  };
}

/** What each storm pod and each bystander pod is told to run. */
function podConfigs(opts: ResolvedLoadOptions, bundles: { worker: string }, startTimeoutMs: number): { podConfig: PodConfig; bystanderConfig: PodConfig | null } {
  const bys = opts.bystanders ?? null;
  const podConfig = podConfigFor(opts, bundles.worker, startTimeoutMs, perWorkerMaxCalls(opts));
  // Bystanders: a slow open loop on one method, bounded by time alone, on the storm's client.
  const bystanderConfig: PodConfig | null = bys && {
    ...podConfig,
    worker: {
      ...podConfig.worker,
      connection: bys.connection,
      rate: bys.rate,
      deadlineMs: bys.deadlineMs,
      retry: bys.retry,
      methods: [[bys.method, 1]],
      maxCalls: null,
    },
    workers: bys.workersPerPod,
  };
  return { podConfig, bystanderConfig };
}

/**
 * Waits until every pod alive is ready. A pod its owner ended while starting (churn) is no failure —
 * its replacement joins — but a pod that timed out or crashed fails the run.
 */
async function waitPodsReady(handles: readonly PodHandle[], startTimeoutMs: number, stopping: () => boolean, pause: (ms: number) => Promise<void>): Promise<void> {
  const startDeadline = Date.now() + startTimeoutMs;
  while (!stopping()) {
    const failed = handles.find((h) => h.failure);
    if (failed) throw failed.failure;
    const live = handles.filter((h) => !h.isFinished);
    if (live.length > 0 && live.every((h) => h.isReady)) return;
    // Churn faster than start-up would keep some pod starting forever: once a pod has been
    // replaced, start with the ready ones; the others join when ready, as replacements do.
    const churned = handles.some((h) => h.isFinished && !h.failure);
    if (churned && live.some((h) => h.isReady)) return;
    if (Date.now() > startDeadline) throw new TimeoutError(`load: pods were not ready within ${startTimeoutMs} ms`);
    await pause(100);
  }
}

/** The storm's figures over the load phase (the bystanders' are added apart). */
function stormSummary(
  agg: LoadAggregator,
  opts: ResolvedLoadOptions,
  run: { startedAt: Date; durationMs: number; memory: MemoryStats | null; storm: readonly PodHandle[]; workers: number; aborted: boolean; late: LoadSummary['late'] },
): LoadSummary {
  const latency: Partial<Record<Outcome, LatencySummary>> = {};
  const whole = agg.wholeRunHistograms();
  for (const o of OUTCOMES) {
    const h = whole[o];
    if (h && h.totalCount > 0) latency[o] = summarizeDecoded(h);
  }
  const seconds = run.durationMs / 1000;
  return {
    startedAt: run.startedAt.toISOString(),
    durationMs: run.durationMs,
    totals: { calls: agg.calls(), ...agg.totals, byCode: agg.byCode },
    rps: {
      ok: agg.totals.ok / seconds,
      rateLimited: agg.totals.rateLimited / seconds,
      deadlineExceeded: agg.totals.deadlineExceeded / seconds,
      error: agg.totals.error / seconds,
    },
    latency,
    histograms: agg.encodedWholeRun(),
    series: agg.series,
    pods: agg.pods,
    workerMemoryBytes: run.memory,
    // Each pod's own size: a burst's wave pods need not hold workersPerPod.
    workers: run.workers,
    client: opts.client,
    workerCpuSeconds: run.storm.reduce((s, h) => s + h.cpuMs, 0) / 1000,
    workerCrashes: run.storm.reduce((n, h) => n + h.crashes, 0),
    cpu: null,
    aborted: run.aborted,
    late: run.late,
  };
}
