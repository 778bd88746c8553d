// runLoad: starts one pod process per pod (through the sandbox, so each sits in its pod's cgroup),
// each forking its workers; starts them together, merges their seconds as they arrive, and stops
// by itself at the end time, at maxCalls, or when aborted — returning whatever was collected.
// Bystander pods, when asked for, run beside the storm with their own options and are counted apart.
// While it runs the storm can grow: a wave of extra pods (a burst fault) joins and leaves on command.
// Its phases live beside it: run-load-plan (before any pod), run-load-pods (the pods' lives),
// run-load-seconds (the series as it completes), run-load-burst (a wave), run-load-summary.
import { LoadAggregator } from './aggregator.js';
import { bystanderRunOf, type LoadSampleWithBystanders } from './bystanders-summary.js';
import { GeneratorCpuMeter } from './generator-cpu.js';
import { samplePss, type MemoryStats } from './memory.js';
import type { LoadOptions } from './options.js';
import type { PodHost } from './pod-host.js';
import { stormControl } from './run-load-burst.js';
import { planLoad } from './run-load-plan.js';
import { LoadRunPods, type LoadCounts } from './run-load-pods.js';
import { LoadSeconds } from './run-load-seconds.js';
import { stormSummary, type LoadSummary } from './run-load-summary.js';
import type { StormControl } from './storm-wave.js';

// What runLoad returns, defined where it is assembled.
export type { LoadSummary } from './run-load-summary.js';

export interface LoadEnv {
  /** Where pods run; without one, pods are plain local processes (no cgroups, no pod identity). */
  sandbox?: PodHost;
  /** Each second of the storm, with the bystanders' as `bystanders` when there are bystanders. */
  onSecond?: (sample: LoadSampleWithBystanders) => void;
  /**
   * Called once, with Date.now() of the moment the workers are released (second 0 starts then) and
   * the handle that adds extra storm workers while the load runs (burst faults).
   */
  onGo?: (t0: number, storm: StormControl) => void;
  /**
   * Awaited once every pod has forked its workers and before they are released: what the agent
   * needs before it can serve the pods now running (a SPIRE agent: their entries).
   */
  beforeGo?: () => Promise<void>;
  signal?: AbortSignal;
}

// After the end time: workers finish the call in flight (≤ deadline), then report.
const END_GRACE_MS = 3000;

export async function runLoad(input: LoadOptions, env: LoadEnv = {}): Promise<LoadSummary> {
  const plan = await planLoad(input, env.sandbox);
  const { opts, bys, host, built } = plan;
  const counts: LoadCounts = { storm: new LoadAggregator(), bystanders: bys ? new LoadAggregator() : null };
  const pods = new LoadRunPods(plan, counts);
  // Every pod process and worker of the run, while it lives (a finished pod's CPU stays counted).
  const cpuMeter = new GeneratorCpuMeter(() => pods.livePids());
  const seconds = new LoadSeconds(counts, pods, cpuMeter, env.onSecond);

  const onAbort = () => pods.stopAll();
  env.signal?.addEventListener('abort', onAbort, { once: true });
  const timers: NodeJS.Timeout[] = [];
  let memory: MemoryStats | null = null;
  // Set by a timer: an object, so the await below sees what the timer put there.
  const memorySampling: { done: Promise<void> | null } = { done: null };
  const startedAt = new Date();
  let loadEndedAt: number;

  try {
    await host.startPods(pods.podMain);
    if (env.signal?.aborted) pods.stopAll();
    await pods.waitReady();
    if (env.beforeGo && !env.signal?.aborted) await env.beforeGo();

    const t0 = Date.now() + 50;
    const endAt = t0 + opts.durationMs;
    startedAt.setTime(t0);
    pods.release({ type: 'go', t0, endAt });
    cpuMeter.start(t0);
    env.onGo?.(t0, stormControl(pods, host, opts.workersPerPod));
    seconds.start(t0, opts.durationMs);
    timers.push(
      setTimeout(
        () => {
          memorySampling.done = samplePss(
            pods
              .storm()
              .filter((h) => !h.isFinished)
              .flatMap((h) => h.workerPids),
          ).then((m) => void (memory = m));
        },
        Math.max(0, t0 + opts.durationMs / 2 - Date.now()),
      ),
    );
    timers.push(setTimeout(pods.poke, Math.max(0, endAt - Date.now())));

    // Wait until the end time has passed (or a stop) and every pod still around has reported.
    await pods.drain(endAt, endAt + Math.max(opts.deadlineMs, bys?.deadlineMs ?? 0) + END_GRACE_MS);
    loadEndedAt = Math.min(Date.now(), endAt);
  } finally {
    cpuMeter.stop();
    seconds.stop();
    for (const t of timers) clearTimeout(t);
    env.signal?.removeEventListener('abort', onAbort);
    pods.endLoadPhase();
    await host.stopPods();
    pods.killLeftovers();
    await memorySampling.done;
  }

  seconds.emitRest();
  const { storm: agg, bystanders: bysAgg } = counts;
  const durationMs = Math.max(1, loadEndedAt - startedAt.getTime());
  const late = { calls: agg.lateCalls + (bysAgg?.lateCalls ?? 0), maxSeconds: Math.max(agg.maxLateSeconds, bysAgg?.maxLateSeconds ?? 0) };
  const storm = pods.storm();
  const summary = stormSummary(
    agg,
    { ...opts, client: built.client },
    { startedAt, durationMs, memory, storm, workers: pods.stormWorkers(), aborted: env.signal?.aborted ?? false, late },
  );
  if (built.fallback) summary.clientFallback = built.fallback;
  summary.cpu = cpuMeter.means();
  if (bys && bysAgg)
    summary.bystanders = bystanderRunOf(
      bysAgg,
      pods.bystanders().map((h) => h.longestOkGapMs),
      bys.workersPerPod,
      durationMs,
    );
  agg.destroy();
  bysAgg?.destroy();
  return summary;
}
