// The kubelet's crash-loop back-off for the agent: 10 s, doubling, capped at 5 min, reset after a
// long enough healthy run. Pure, so tests drive it with plain numbers.

export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  /** A run at least this long (ms) since the last start resets the delay. */
  resetAfterMs: number;
}

export class RestartBackoff {
  readonly #opts: BackoffOptions;
  #next: number;
  #restarts = 0;

  constructor(opts: BackoffOptions) {
    this.#opts = opts;
    this.#next = opts.initialMs;
  }

  /** Restarts granted so far. */
  get restarts(): number {
    return this.#restarts;
  }

  /** Delay before restarting a process that ran `ranMs` before dying; counts the restart. */
  nextDelay(ranMs: number): number {
    if (ranMs >= this.#opts.resetAfterMs) this.#next = this.#opts.initialMs;
    const delay = Math.min(this.#next, this.#opts.maxMs);
    this.#next = Math.min(this.#next * 2, this.#opts.maxMs);
    this.#restarts++;
    return delay;
  }
}
