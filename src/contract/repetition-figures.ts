// Each repetition's own figures, beside the medians a variant's record gives: what spreads,
// distributions and merged run folders are computed from (a median of medians would not be one).

/** One repetition of a variant (VariantResult.repetitionFigures). */
export interface RepetitionFigures {
  /** Counting from 1 within its run folder. */
  rep: number;
  /** Its folder (`<variant>.r<rep>`). */
  runDir: string;
  /** The peak in the variant's memory measure (an OOM-killed repetition's: usage at the kill); null: unmeasured. */
  peakMemoryBytes: number | null;
  okRps: number;
  rejectedRps: number;
  errorRps: number;
  deadlineExceededRps: number;
  oomKills: number;
  /** ms from the calls' start to the first counted OOM kill; null: not OOM-killed. */
  firstOomKillMs: number | null;
  restarts: number;
  /** Seconds the calls ran (0: the load did not run). */
  loadSeconds: number;
  /** Kubelet /pods requests per second while the calls ran; null: not recorded. */
  kubeletRequestsPerSecond: number | null;
}
