// Latency summaries from the load samples' per-second HDR histograms, used when results.json lacks an
// outcome's summary — e.g. a variant cut short by an interrupted run. Merging and percentiles are
// the load generator's own, so these figures match what the runner would have written.
import { mergeEncodedHistograms, summarizeHistogram } from '../load/index.js';
import type { LatencySummary, Outcome, SampleLine } from '../contract/index.js';

const OUTCOMES: readonly Outcome[] = ['ok', 'rateLimited', 'deadlineExceeded', 'error'];

/** Merges every load-phase histogram per outcome across the given sample lists. */
export function latencyFromSamples(sampleLists: SampleLine[][]): Partial<Record<Outcome, LatencySummary>> {
  const encoded = new Map<Outcome, string[]>(OUTCOMES.map((o) => [o, []]));
  for (const samples of sampleLists) {
    const loadEnd = loadEndTime(samples);
    for (const s of samples) {
      // Warm-up traffic (t < 0) and the drain after load-end are not part of the measured load.
      if (s.kind !== 'load' || s.t < 0 || s.t > loadEnd) continue;
      for (const outcome of OUTCOMES) {
        const h = s.histograms?.[outcome];
        if (h) encoded.get(outcome)!.push(h);
      }
    }
  }
  const out: Partial<Record<Outcome, LatencySummary>> = {};
  for (const [outcome, list] of encoded) {
    if (list.length === 0) continue;
    const summary = summarizeHistogram(mergeEncodedHistograms(list));
    if (summary.count > 0) out[outcome] = summary;
  }
  return out;
}

function loadEndTime(samples: SampleLine[]): number {
  for (const s of samples) if (s.kind === 'event' && s.type === 'load-end') return s.t;
  return Number.POSITIVE_INFINITY;
}
