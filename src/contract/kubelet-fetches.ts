// The kubelet's fetch schedule as results.json keeps it: per repetition, the /pods requests that
// arrived while the calls ran (rate, answer times, bytes, concurrency), and per variant the same
// folded over its repetitions. The requests themselves are kubelet-fetch sample lines.
/** One repetition's /pods requests that arrived while the calls ran. */
export interface KubeletFetchFigures {
  requests: number;
  /** Seconds the calls ran (the window the requests are counted in). */
  seconds: number;
  /** Requests whose answer was written whole, whatever its status. */
  answered: number;
  /** By HTTP status ("200", "500", "none" for no answer). */
  byStatus: Record<string, number>;
  /** Requests whose client left before the answer was written whole. */
  abandoned: number;
  /** Body bytes written. */
  bytes: number;
  /** Most /pods requests in flight at once (seen at arrivals). */
  maxInFlight: number;
  maxQueueWaitMs: number;
  /** Answer times (arrival to last byte) of the answered requests: base64 HDR histogram, microseconds. */
  answerHistogram: string;
  /** Requests of the whole repetition folded into per-second lines beyond the line cap (not one line each). */
  aggregated: number;
}

/** A variant's /pods requests over its repetitions (VariantResult.kubeletFetches). */
export interface KubeletFetchRecord {
  repetitions: number;
  /** Requests per second while the calls ran: median over repetitions, with min–max. */
  requestsPerSecond: number;
  requestsPerSecondRange: { min: number; max: number };
  /** Answer times of every answered request of every repetition (merged histograms); null: none answered. */
  answerMs: { p50: number; p95: number; max: number } | null;
  /** Body bytes per answered request (all repetitions); null: none answered. */
  bytesPerAnswer: number | null;
  maxInFlight: number;
  abandoned: number;
  byStatus: Record<string, number>;
  /** Requests folded into per-second lines beyond the line cap, over every repetition. */
  aggregated: number;
}
