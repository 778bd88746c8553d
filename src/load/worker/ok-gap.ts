// The longest time a worker went without a successful call during the load phase, from the
// completion times of its calls (not from 1 s buckets): what a workload waiting for its identity
// actually experiences. Kept free of I/O so it can be tested with a fake clock.

export class OkGapTracker {
  #lastOkAt = 0;
  #endAt = 0;
  #longest = 0;
  #started = false;

  /** The phase runs from t0 to endAt (epoch ms); the first gap starts at t0. */
  start(t0: number, endAt: number): void {
    this.#lastOkAt = t0;
    this.#endAt = endAt;
    this.#started = true;
  }

  /** A call completed successfully at `at` (a late answer past the end counts at the end). */
  ok(at: number): void {
    if (!this.#started) return;
    const t = Math.min(at, this.#endAt);
    this.#longest = Math.max(this.#longest, t - this.#lastOkAt);
    this.#lastOkAt = Math.max(this.#lastOkAt, t);
  }

  /**
   * The longest gap, closing the last one at `at` (the end of the phase, or an earlier stop):
   * the whole phase when nothing succeeded, 0 when the phase never started.
   */
  finish(at: number): number {
    this.ok(at);
    return this.#longest;
  }
}
