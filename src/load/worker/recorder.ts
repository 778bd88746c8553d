// A worker's measurements for the current second: one HDR histogram per outcome and counters per
// status code, handed over encoded and reset when the second changes.
import { LatencyHistogram } from './latency-histogram.js';
import { OUTCOMES, zeroCounts, type IntervalData, type Outcome } from './messages.js';
import { statusName } from './policy.js';

export class SecondRecorder {
  #second = -1;
  #counts = zeroCounts();
  #byCode: Record<string, number> = {};
  #calls = 0;
  // Histograms live for the worker's lifetime and are reset, not rebuilt, every second.
  readonly #histograms: Partial<Record<Outcome, LatencyHistogram>> = {};

  /** Records one call; returns the finished previous second's data when `second` moved on. */
  record(second: number, outcome: Outcome, code: number, us: number): IntervalData | null {
    const finished = second !== this.#second ? this.take() : null;
    this.#second = second;
    this.#counts[outcome]++;
    const name = statusName(code);
    this.#byCode[name] = (this.#byCode[name] ?? 0) + 1;
    this.#calls++;
    (this.#histograms[outcome] ??= new LatencyHistogram()).recordValue(us);
    return finished;
  }

  /** The current second's data (null when nothing was recorded), and a fresh second. */
  take(): IntervalData | null {
    if (this.#calls === 0) return null;
    const histograms: Partial<Record<Outcome, string>> = {};
    for (const o of OUTCOMES) {
      const h = this.#histograms[o];
      if (h && h.totalCount > 0) {
        histograms[o] = h.encodeIntoCompressedBase64();
        h.reset();
      }
    }
    const data: IntervalData = { second: this.#second, counts: this.#counts, byCode: this.#byCode, histograms };
    this.#counts = zeroCounts();
    this.#byCode = {};
    this.#calls = 0;
    return data;
  }

  /** The second being recorded (-1 before the first call). */
  get second(): number {
    return this.#second;
  }
}
