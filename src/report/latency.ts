// Latency summaries from the load samples' per-second HDR histograms (microseconds), used when
// results.json lacks an outcome's summary — e.g. a placement cut short by an interrupted run.
import * as hdr from 'hdr-histogram-js';
import type { LatencySummary, Outcome, SampleLine } from '../scenario/index.js';

const OUTCOMES: readonly Outcome[] = ['ok', 'rateLimited', 'deadlineExceeded', 'error'];

/** Merges every load-phase histogram per outcome across the given sample lists. */
export function latencyFromSamples(sampleLists: SampleLine[][]): Partial<Record<Outcome, LatencySummary>> {
  const merged = new Map<Outcome, hdr.Histogram>();
  for (const samples of sampleLists) {
    const loadEnd = loadEndTime(samples);
    for (const s of samples) {
      // Warm-up traffic (t < 0) and the drain after load-end are not part of the measured load.
      if (s.kind !== 'load' || s.t < 0 || s.t > loadEnd) continue;
      for (const outcome of OUTCOMES) {
        const encoded = s.histograms[outcome];
        if (!encoded) continue;
        const h = hdr.decodeFromCompressedBase64(encoded);
        let acc = merged.get(outcome);
        if (!acc) {
          acc = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: 3 });
          merged.set(outcome, acc);
        }
        acc.add(h);
        h.destroy();
      }
    }
  }
  const out: Partial<Record<Outcome, LatencySummary>> = {};
  for (const [outcome, h] of merged) {
    if (h.totalCount > 0) out[outcome] = summarize(h);
    h.destroy();
  }
  return out;
}

function summarize(h: hdr.Histogram): LatencySummary {
  const ms = (us: number) => us / 1000;
  return {
    count: h.totalCount,
    p50Ms: ms(h.getValueAtPercentile(50)),
    p90Ms: ms(h.getValueAtPercentile(90)),
    p99Ms: ms(h.getValueAtPercentile(99)),
    p999Ms: ms(h.getValueAtPercentile(99.9)),
    maxMs: ms(h.maxValue),
  };
}

function loadEndTime(samples: SampleLine[]): number {
  for (const s of samples) if (s.kind === 'event' && s.type === 'load-end') return s.t;
  return Number.POSITIVE_INFINITY;
}
