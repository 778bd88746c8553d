// The data contract's bystander fields, kept here until the lead moves them into src/contract:
// what a LoadSample line carries per second, and what a variant's results carry for the whole run.
import type { Outcome } from '../contract/index.js';

/** LoadSample.bystanders: the bystander pods' merged counts for that second (the storm's fields stay the storm's). */
export interface BystanderSecond {
  ok: number;
  rateLimited: number;
  deadlineExceeded: number;
  error: number;
  /** Calls per gRPC status code name, e.g. { OK: 2, UNAVAILABLE: 1 }. */
  byCode: Record<string, number>;
  /** Base64 HDR histograms (microseconds) of latency per outcome, this second only. */
  histograms: Partial<Record<Outcome, string>>;
}

/** VariantResult.bystanders: the service level the innocent pods got over the whole load phase. */
export interface BystanderSummary {
  calls: number;
  ok: number;
  /** ok / calls; 0 when no call completed. */
  successRatio: number;
  /** Latency of successful calls (merged HDR histograms); null when none succeeded. */
  p50Ms: number | null;
  p99Ms: number | null;
  /**
   * The longest time any one bystander worker went without a successful call, from the start of
   * the load phase to its end (start → first success and last success → end included), measured
   * from completion timestamps in the workers. At rate r with every call served it is about 1000/r.
   */
  longestGapMs: number;
  /** Calls per gRPC status code name. */
  byStatus: Record<string, number>;
}
