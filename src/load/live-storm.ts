// The storm's size over time: pods join when they are told to go (their workers start calling) and
// leave when they finish, so churn, crashes and a burst's wave of extra pods all show in the series
// (LoadSample.stormPods / stormWorkers) next to the calls they made.

interface Step {
  at: number;
  pods: number;
  workers: number;
}

export class LiveStorm {
  /** Joins (+) and leaves (−) in time order. */
  readonly #steps: Step[] = [];

  join(at: number, workers: number): void {
    this.#add({ at, pods: 1, workers });
  }

  leave(at: number, workers: number): void {
    this.#add({ at, pods: -1, workers: -workers });
  }

  /** The most pods and workers calling at once in [from, to) (ms, Date.now() scale). */
  peak(from: number, to: number): { pods: number; workers: number } {
    let pods = 0;
    let workers = 0;
    let i = 0;
    for (; i < this.#steps.length && this.#steps[i]!.at <= from; i++) {
      pods += this.#steps[i]!.pods;
      workers += this.#steps[i]!.workers;
    }
    let most = { pods, workers };
    for (; i < this.#steps.length && this.#steps[i]!.at < to; i++) {
      pods += this.#steps[i]!.pods;
      workers += this.#steps[i]!.workers;
      if (workers > most.workers || (workers === most.workers && pods > most.pods)) most = { pods, workers };
    }
    return most;
  }

  #add(step: Step): void {
    // Steps arrive nearly in order; a late one (timers on a busy machine) is slotted in place.
    let i = this.#steps.length;
    while (i > 0 && this.#steps[i - 1]!.at > step.at) i--;
    this.#steps.splice(i, 0, step);
  }
}
