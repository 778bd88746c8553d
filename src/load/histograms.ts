// Merging and summarizing encoded latency histograms (microseconds): the only way percentiles are
// ever produced, after all hops have merged raw counts.
import type { Histogram } from 'hdr-histogram-js';
import type { LatencySummary } from '../contract/index.js';
import { decodeHistogram, encodeHistogram, newHistogram } from './worker/interval.js';

export { decodeHistogram, encodeHistogram, newHistogram };

/** One encoded histogram holding the counts of all of `list` (empty strings are skipped). */
export function mergeEncodedHistograms(list: readonly string[]): string {
  const acc = newHistogram();
  try {
    for (const encoded of list) {
      if (!encoded) continue;
      const h = decodeHistogram(encoded);
      acc.add(h);
      h.destroy();
    }
    return encodeHistogram(acc);
  } finally {
    acc.destroy();
  }
}

export function summarizeDecoded(h: Histogram): LatencySummary {
  const ms = (us: number) => Math.round(us) / 1000;
  return {
    count: h.totalCount,
    p50Ms: ms(h.getValueAtPercentile(50)),
    p90Ms: ms(h.getValueAtPercentile(90)),
    p99Ms: ms(h.getValueAtPercentile(99)),
    p999Ms: ms(h.getValueAtPercentile(99.9)),
    maxMs: ms(h.maxValue),
  };
}

/** Count and percentiles (milliseconds) of an encoded histogram of microseconds. */
export function summarizeHistogram(encoded: string): LatencySummary {
  const h = decodeHistogram(encoded);
  try {
    return summarizeDecoded(h);
  } finally {
    h.destroy();
  }
}
