// The bystander pods' figures: per second (attached to the storm's LoadSample as `bystanders`), per
// run (BystanderRun, mergeable), and the summary results.json carries, merged across repetitions.
import type { BystanderSecond, BystanderSummary, LatencySummary, LoadSample, Outcome } from '../contract/index.js';
import type { LoadAggregator, PodTotals } from './aggregator.js';
import { decodeHistogram, newHistogram, summarizeDecoded } from './histograms.js';
import { OUTCOMES } from './worker/messages.js';

/** One load run's bystander data: raw enough to merge runs exactly (counts, encoded histograms, gaps). */
export interface BystanderRun {
  summary: BystanderSummary;
  totals: { calls: number; ok: number; rateLimited: number; deadlineExceeded: number; error: number; byCode: Record<string, number> };
  latency: Partial<Record<Outcome, LatencySummary>>;
  /** Whole-run encoded histograms (microseconds) per outcome. */
  histograms: Partial<Record<Outcome, string>>;
  /** Per bystander pod UID. */
  pods: Record<string, PodTotals>;
  /** Bystander worker processes started. */
  workers: number;
}

/** A storm LoadSample that may carry the bystanders' second (the field the contract gains). */
export type LoadSampleWithBystanders = LoadSample & { bystanders?: BystanderSecond };

/** The bystander aggregator's sample for a second, as the storm sample's `bystanders` field. */
export function toBystanderSecond(s: LoadSample): BystanderSecond {
  return { ok: s.ok, rateLimited: s.rateLimited, deadlineExceeded: s.deadlineExceeded, error: s.error, byCode: s.byCode, histograms: s.histograms };
}

const ms = (us: number) => Math.round(us) / 1000;

/**
 * The summary of one or more bystander runs (repetitions): counts and statuses summed, p50/p99 of
 * successful calls from the merged ok histograms, the longest gap of any run.
 */
export function summarizeBystanders(runs: ReadonlyArray<Pick<BystanderRun, 'totals' | 'histograms'> & { longestGapMs: number }>): BystanderSummary {
  let calls = 0;
  let ok = 0;
  let longestGapMs = 0;
  const byStatus: Record<string, number> = {};
  const okHist = newHistogram();
  try {
    for (const r of runs) {
      calls += r.totals.calls;
      ok += r.totals.ok;
      longestGapMs = Math.max(longestGapMs, r.longestGapMs);
      for (const [code, n] of Object.entries(r.totals.byCode)) byStatus[code] = (byStatus[code] ?? 0) + n;
      const enc = r.histograms.ok;
      if (enc) {
        const h = decodeHistogram(enc);
        okHist.add(h);
        h.destroy();
      }
    }
    const served = okHist.totalCount > 0;
    return {
      calls,
      ok,
      successRatio: calls > 0 ? ok / calls : 0,
      p50Ms: served ? ms(okHist.getValueAtPercentile(50)) : null,
      p99Ms: served ? ms(okHist.getValueAtPercentile(99)) : null,
      longestGapMs: Math.round(longestGapMs),
      byStatus,
    };
  } finally {
    okHist.destroy();
  }
}

/** Merges repetitions' BystanderRuns into the summary for results.json (VariantResult.bystanders). */
export function mergeBystanderRuns(runs: readonly BystanderRun[]): BystanderSummary {
  return summarizeBystanders(runs.map((r) => ({ totals: r.totals, histograms: r.histograms, longestGapMs: r.summary.longestGapMs })));
}

/** Latency per outcome from whole-run encoded histograms. */
export function latencyOf(histograms: Partial<Record<Outcome, string>>): Partial<Record<Outcome, LatencySummary>> {
  const out: Partial<Record<Outcome, LatencySummary>> = {};
  for (const o of OUTCOMES) {
    const enc = histograms[o];
    if (!enc) continue;
    const h = decodeHistogram(enc);
    try {
      if (h.totalCount > 0) out[o] = summarizeDecoded(h);
    } finally {
      h.destroy();
    }
  }
  return out;
}

/**
 * One run's BystanderRun from the bystander pods' aggregator and each pod's longest gap without a
 * success (worker-side completion times). A pod that never reported its gap (it crashed, or its
 * final dump never arrived) is charged the whole phase, since none of its successes were seen.
 */
export function bystanderRunOf(agg: LoadAggregator, podGapsMs: ReadonlyArray<number | null>, workersPerPod: number, durationMs: number): BystanderRun {
  const totals = { calls: agg.calls(), ...agg.totals, byCode: { ...agg.byCode } };
  const histograms = agg.encodedWholeRun();
  const longestGapMs = podGapsMs.reduce<number>((m, g) => Math.max(m, g ?? durationMs), 0);
  return {
    summary: summarizeBystanders([{ totals, histograms, longestGapMs }]),
    totals,
    latency: latencyOf(histograms),
    histograms,
    pods: { ...agg.pods },
    workers: podGapsMs.length * workersPerPod,
  };
}
