// Per-second accumulators shared by every hop: a worker records into one, a pod process merges its
// workers' into one, the generator merges pods'. Histograms are microseconds, 3 significant digits,
// auto-resizing so a 30 s stall does not clip.
import { build, decodeFromCompressedBase64, encodeIntoCompressedBase64, type Histogram } from 'hdr-histogram-js';
import { OUTCOMES, zeroCounts, type IntervalData, type Outcome } from './messages.js';

export { zeroCounts };

export function newHistogram(): Histogram {
  return build({ bitBucketSize: 32, numberOfSignificantValueDigits: 3, lowestDiscernibleValue: 1, autoResize: true });
}

export function decodeHistogram(encoded: string): Histogram {
  return decodeFromCompressedBase64(encoded, 32, false);
}

export function encodeHistogram(h: Histogram): string {
  return encodeIntoCompressedBase64(h);
}

/** Sums IntervalData of one second (from many senders) without decoding more than needed. */
export class IntervalMerger {
  readonly second: number;
  readonly counts = zeroCounts();
  readonly byCode: Record<string, number> = {};
  readonly #histograms: Partial<Record<Outcome, Histogram>> = {};

  constructor(second: number) {
    this.second = second;
  }

  add(data: IntervalData): void {
    for (const o of OUTCOMES) this.counts[o] += data.counts[o];
    for (const [code, n] of Object.entries(data.byCode)) this.byCode[code] = (this.byCode[code] ?? 0) + n;
    for (const o of OUTCOMES) {
      const enc = data.histograms[o];
      if (!enc) continue;
      // Decoded histograms do not auto-resize; the accumulator must, or a later, wider one throws.
      const h = decodeHistogram(enc);
      (this.#histograms[o] ??= newHistogram()).add(h);
      h.destroy();
    }
  }

  calls(): number {
    return this.counts.ok + this.counts.rateLimited + this.counts.deadlineExceeded + this.counts.error;
  }

  toData(): IntervalData {
    const histograms: Partial<Record<Outcome, string>> = {};
    for (const o of OUTCOMES) {
      const h = this.#histograms[o];
      if (h && h.totalCount > 0) histograms[o] = encodeHistogram(h);
    }
    return { second: this.second, counts: { ...this.counts }, byCode: { ...this.byCode }, histograms };
  }

  /** The merged histogram of one outcome (owned by the merger; do not destroy). */
  histogram(o: Outcome): Histogram | undefined {
    return this.#histograms[o];
  }

  destroy(): void {
    for (const o of OUTCOMES) this.#histograms[o]?.destroy();
  }
}
