// A variant's /pods requests over its repetitions: the rate's median with min–max, answer times
// from every repetition's histogram merged (never a median of percentiles), bytes per answer.
import type { KubeletFetchFigures, KubeletFetchRecord } from '../contract/index.js';
import { decodeHistogram, newHistogram } from '../load/index.js';
import { median } from './aggregate.js';

/** Median, 95th percentile and maximum (ms) of encoded answer-time histograms (microseconds) merged; null when empty. */
export function answerTimes(encoded: readonly string[]): { p50: number; p95: number; max: number } | null {
  const acc = newHistogram();
  try {
    for (const e of encoded) {
      if (!e) continue;
      const d = decodeHistogram(e);
      acc.add(d);
      d.destroy();
    }
    if (acc.totalCount === 0) return null;
    const ms = (us: number) => Math.round(us) / 1000;
    return { p50: ms(acc.getValueAtPercentile(50)), p95: ms(acc.getValueAtPercentile(95)), max: ms(acc.maxValue) };
  } finally {
    acc.destroy();
  }
}

const round2 = (x: number) => Math.round(x * 100) / 100;

/** The repetitions' figures folded; null when none recorded any. */
export function kubeletFetchRecord(reps: readonly (KubeletFetchFigures | undefined)[]): KubeletFetchRecord | null {
  const figs = reps.filter((f): f is KubeletFetchFigures => f !== undefined);
  if (figs.length === 0) return null;
  const rates = figs.map((f) => (f.seconds > 0 ? f.requests / f.seconds : 0));
  const answered = figs.reduce((n, f) => n + f.answered, 0);
  const byStatus: Record<string, number> = {};
  for (const f of figs) for (const [k, n] of Object.entries(f.byStatus)) byStatus[k] = (byStatus[k] ?? 0) + n;
  return {
    repetitions: figs.length,
    requestsPerSecond: round2(median(rates)),
    requestsPerSecondRange: { min: round2(Math.min(...rates)), max: round2(Math.max(...rates)) },
    answerMs: answerTimes(figs.map((f) => f.answerHistogram)),
    bytesPerAnswer: answered > 0 ? Math.round(figs.reduce((n, f) => n + f.bytes, 0) / answered) : null,
    maxInFlight: Math.max(...figs.map((f) => f.maxInFlight)),
    abandoned: figs.reduce((n, f) => n + f.abandoned, 0),
    byStatus,
    aggregated: figs.reduce((n, f) => n + f.aggregated, 0),
  };
}
