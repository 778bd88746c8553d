// The generator's merge of pods' per-second data: a per-second series (total and per pod) emitted
// as LoadSample objects, whole-run histograms per outcome, and totals per pod.
import type { Histogram } from 'hdr-histogram-js';
import type { LoadSample, Outcome } from '../contract/index.js';
import { encodeHistogram, newHistogram } from './histograms.js';
import type { LoadPod } from './pod-host.js';
import { IntervalMerger, zeroCounts } from './worker/interval.js';
import { OUTCOMES, type IntervalData } from './worker/messages.js';

export interface PodTotals {
  name: string;
  ok: number;
  rateLimited: number;
  /** Deadline exceeded and every other error. */
  error: number;
}

type PodSecond = { ok: number; rateLimited: number; error: number };

export class LoadAggregator {
  readonly totals = zeroCounts();
  readonly byCode: Record<string, number> = {};
  readonly pods: Record<string, PodTotals> = {};
  readonly series: LoadSample[] = [];
  readonly #whole: Partial<Record<Outcome, Histogram>> = {};
  readonly #pending = new Map<number, { merger: IntervalMerger; pods: Record<string, PodSecond> }>();
  /** Seconds below this were emitted. */
  #nextToEmit = 0;
  /** Calls that arrived for an already-emitted second and were counted in a later one. */
  lateCalls = 0;
  /** The most seconds a late call was moved by (0: none was). */
  maxLateSeconds = 0;

  calls(): number {
    return this.totals.ok + this.totals.rateLimited + this.totals.deadlineExceeded + this.totals.error;
  }

  add(pod: LoadPod, data: IntervalData): void {
    // Data for a second already emitted joins the next open one: the series keeps summing to the
    // totals, at the price of shifting a straggler by a second (counted in lateCalls).
    let second = data.second;
    if (second < this.#nextToEmit) {
      this.maxLateSeconds = Math.max(this.maxLateSeconds, this.#nextToEmit - second);
      second = this.#nextToEmit;
      this.lateCalls += data.counts.ok + data.counts.rateLimited + data.counts.deadlineExceeded + data.counts.error;
    }
    let slot = this.#pending.get(second);
    if (!slot) this.#pending.set(second, (slot = { merger: new IntervalMerger(second), pods: {} }));
    slot.merger.add(data);
    const p = (slot.pods[pod.uid] ??= { ok: 0, rateLimited: 0, error: 0 });
    p.ok += data.counts.ok;
    p.rateLimited += data.counts.rateLimited;
    p.error += data.counts.deadlineExceeded + data.counts.error;
    const t = (this.pods[pod.uid] ??= { name: pod.name, ok: 0, rateLimited: 0, error: 0 });
    t.ok += data.counts.ok;
    t.rateLimited += data.counts.rateLimited;
    t.error += data.counts.deadlineExceeded + data.counts.error;
    for (const o of OUTCOMES) this.totals[o] += data.counts[o];
    for (const [code, n] of Object.entries(data.byCode)) this.byCode[code] = (this.byCode[code] ?? 0) + n;
  }

  /** Registers a pod so it appears in the totals even if it never completed a call. */
  notePod(pod: LoadPod): void {
    this.pods[pod.uid] ??= { name: pod.name, ok: 0, rateLimited: 0, error: 0 };
  }

  /**
   * Emits every second up to and including `upTo`, in order, empty seconds included so the series
   * has no holes. Returns the new samples (also appended to `series`).
   */
  emitUpTo(upTo: number): LoadSample[] {
    const out: LoadSample[] = [];
    for (; this.#nextToEmit <= upTo; this.#nextToEmit++) {
      const k = this.#nextToEmit;
      const slot = this.#pending.get(k);
      this.#pending.delete(k);
      const sample: LoadSample = { kind: 'load', t: k * 1000, ok: 0, rateLimited: 0, deadlineExceeded: 0, error: 0, byCode: {}, histograms: {}, pods: {} };
      if (slot) {
        const d = slot.merger.toData();
        Object.assign(sample, d.counts);
        sample.byCode = d.byCode;
        sample.histograms = d.histograms;
        sample.pods = slot.pods;
        for (const o of OUTCOMES) {
          const h = slot.merger.histogram(o);
          if (h && h.totalCount > 0) (this.#whole[o] ??= newHistogram()).add(h);
        }
        slot.merger.destroy();
      }
      this.series.push(sample);
      out.push(sample);
    }
    return out;
  }

  /** Emits everything still pending (at the end of a run). */
  emitAll(): LoadSample[] {
    return this.emitUpTo(this.lastSecond());
  }

  /** The last second emitted or holding data (-1 when none). */
  lastSecond(): number {
    return Math.max(this.#nextToEmit - 1, ...this.#pending.keys());
  }

  wholeRunHistograms(): Partial<Record<Outcome, Histogram>> {
    return this.#whole;
  }

  encodedWholeRun(): Partial<Record<Outcome, string>> {
    const out: Partial<Record<Outcome, string>> = {};
    for (const o of OUTCOMES) {
      const h = this.#whole[o];
      if (h && h.totalCount > 0) out[o] = encodeHistogram(h);
    }
    return out;
  }

  destroy(): void {
    for (const o of OUTCOMES) this.#whole[o]?.destroy();
    for (const slot of this.#pending.values()) slot.merger.destroy();
    this.#pending.clear();
  }
}
