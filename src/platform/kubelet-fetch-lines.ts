// The kubelet's fetch schedule into a repetition's samples, bounded: each /pods request a line of
// its own up to KUBELET_FETCH_LINE_CAP a second (by the second it ended), the rest of that second
// folded into one kubelet-fetches line with an answer-time histogram. Beside the lines, the figures
// of the requests that arrived while the calls ran, for results.json.
import { KUBELET_FETCH_LINE_CAP, type KubeletFetchFigures, type KubeletFetchSample, type KubeletFetchesSecond } from '../contract/index.js';
import { encodeHistogram, newHistogram } from '../load/index.js';

/** What the figures need of one request; kept for every request until the window is known. */
interface Kept {
  t: number;
  answerMs: number | null;
  status: number | null;
  bytes: number;
  abandoned: boolean;
  inFlight: number;
  queueWaitMs: number;
}

/** One second's requests beyond the cap, until a later second starts. */
interface Folded {
  second: number;
  line: Omit<KubeletFetchesSecond, 'answerHistogram'>;
  histogram: ReturnType<typeof newHistogram>;
}

const statusKey = (s: number | null) => (s === null ? 'none' : String(s));

export class KubeletFetchLines {
  readonly #write: (line: KubeletFetchSample | KubeletFetchesSecond) => void;
  readonly #cap: number;
  readonly #kept: Kept[] = [];
  #second = Number.NEGATIVE_INFINITY;
  #linesThisSecond = 0;
  #folded: Folded | null = null;
  #aggregated = 0;

  constructor(write: (line: KubeletFetchSample | KubeletFetchesSecond) => void, cap = KUBELET_FETCH_LINE_CAP) {
    this.#write = write;
    this.#cap = cap;
  }

  /** A request that is over, ended at `endT` (its answer's end, or when its client left); seconds must come in order. */
  add(line: KubeletFetchSample, endT: number): void {
    this.#kept.push({
      t: line.t,
      answerMs: line.answerEnd === null ? null : line.answerEnd - line.t,
      status: line.status,
      bytes: line.bytes,
      abandoned: line.abandoned === true,
      inFlight: line.inFlight,
      queueWaitMs: line.queueWaitMs,
    });
    const second = Math.floor(endT / 1000);
    if (second > this.#second) {
      this.#flushFolded();
      this.#second = second;
      this.#linesThisSecond = 0;
    }
    if (this.#linesThisSecond < this.#cap) {
      this.#linesThisSecond++;
      this.#write(line);
      return;
    }
    this.#fold(line, second);
  }

  #fold(line: KubeletFetchSample, second: number): void {
    this.#aggregated++;
    const f = (this.#folded ??= {
      second,
      line: { kind: 'kubelet-fetches', t: second * 1000, requests: 0, byStatus: {}, bytes: 0, abandoned: 0 },
      histogram: newHistogram(),
    });
    f.line.requests++;
    f.line.byStatus[statusKey(line.status)] = (f.line.byStatus[statusKey(line.status)] ?? 0) + 1;
    f.line.bytes += line.bytes;
    if (line.abandoned) f.line.abandoned++;
    if (line.answerEnd !== null) f.histogram.recordValue(Math.max(1, Math.round((line.answerEnd - line.t) * 1000)));
  }

  #flushFolded(): void {
    const f = this.#folded;
    if (!f) return;
    this.#folded = null;
    this.#write({ ...f.line, answerHistogram: encodeHistogram(f.histogram) });
    f.histogram.destroy();
  }

  /** Writes the second still being folded. */
  flush(): void {
    this.#flushFolded();
  }

  /** The figures of the requests that arrived in [fromT, toT] (ms on the timeline), over `seconds` of calls. */
  figures(fromT: number, toT: number, seconds: number): KubeletFetchFigures {
    const inWindow = this.#kept.filter((k) => k.t >= fromT && k.t <= toT);
    const h = newHistogram();
    try {
      const byStatus: Record<string, number> = {};
      let answered = 0;
      for (const k of inWindow) {
        byStatus[statusKey(k.status)] = (byStatus[statusKey(k.status)] ?? 0) + 1;
        if (k.answerMs === null) continue;
        answered++;
        h.recordValue(Math.max(1, Math.round(k.answerMs * 1000)));
      }
      return {
        requests: inWindow.length,
        seconds,
        answered,
        byStatus,
        abandoned: inWindow.filter((k) => k.abandoned).length,
        bytes: inWindow.reduce((n, k) => n + k.bytes, 0),
        maxInFlight: inWindow.reduce((n, k) => Math.max(n, k.inFlight), 0),
        maxQueueWaitMs: inWindow.reduce((n, k) => Math.max(n, k.queueWaitMs), 0),
        answerHistogram: encodeHistogram(h),
        aggregated: this.#aggregated,
      };
    } finally {
      h.destroy();
    }
  }
}
