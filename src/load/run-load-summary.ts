// What a load run returns: the storm's figures over the load phase (the bystanders' are added apart
// as LoadSummary.bystanders), from the storm's aggregator and its pods' final reports.
import type { LatencySummary, LoadSample, Outcome } from '../contract/index.js';
import type { LoadAggregator, PodTotals } from './aggregator.js';
import type { BystanderRun } from './bystanders-summary.js';
import type { GeneratorCpuSecond } from './generator-cpu.js';
import { summarizeDecoded } from './histograms.js';
import type { MemoryStats } from './memory.js';
import type { ResolvedLoadOptions } from './options.js';
import type { PodHandle } from './pod-handle.js';
import { OUTCOMES, type LoadClient } from './worker/messages.js';

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

/** The storm's figures over the load phase (the bystanders' are added apart). */
export function stormSummary(
  agg: LoadAggregator,
  opts: ResolvedLoadOptions,
  run: {
    startedAt: Date;
    durationMs: number;
    memory: MemoryStats | null;
    storm: readonly PodHandle[];
    workers: number;
    aborted: boolean;
    late: LoadSummary['late'];
  },
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
