// A load run's seconds as they complete: each storm second goes out once every running pod has
// reported it (or a bound later), with the live storm's size, the generator's CPU and the
// bystanders' same second attached; the last second only at the end.
import { toBystanderSecond, type LoadSampleWithBystanders } from './bystanders-summary.js';
import type { GeneratorCpuMeter } from './generator-cpu.js';
import type { LoadCounts, LoadRunPods } from './run-load-pods.js';

// A second is emitted this long after it ends, so pod processes (which forward 250 ms after the
// second) have had their turn even on a busy machine.
const EMIT_GRACE_MS = 700;
// On a saturated machine pod processes forward late (they get little CPU next to a storm). A second
// waits until every running pod has reported it, but no longer than this past its grace time.
const MAX_STRAGGLE_MS = 3000;
const TICK_MS = 250;

export class LoadSeconds {
  readonly #counts: LoadCounts;
  readonly #pods: LoadRunPods;
  readonly #cpuMeter: GeneratorCpuMeter;
  readonly #onSecond: ((sample: LoadSampleWithBystanders) => void) | undefined;
  readonly #timers: NodeJS.Timeout[] = [];
  #t0 = 0;

  constructor(counts: LoadCounts, pods: LoadRunPods, cpuMeter: GeneratorCpuMeter, onSecond: ((sample: LoadSampleWithBystanders) => void) | undefined) {
    this.#counts = counts;
    this.#pods = pods;
    this.#cpuMeter = cpuMeter;
    this.#onSecond = onSecond;
  }

  /**
   * From the release at t0: the last second is emitted only at the end (emitRest), since calls in
   * flight at the end time land in it. Otherwise a second goes out once every running pod has
   * reported it (its workers' data has arrived), or MAX_STRAGGLE_MS after its grace time at the latest.
   */
  start(t0: number, durationMs: number): void {
    this.#t0 = t0;
    const lastSecond = Math.ceil(durationMs / 1000) - 1;
    const tick = () => {
      const now = Date.now();
      const byClock = Math.min(lastSecond - 1, Math.floor((now - t0 - EMIT_GRACE_MS) / 1000));
      const forced = Math.min(lastSecond - 1, Math.floor((now - t0 - EMIT_GRACE_MS - MAX_STRAGGLE_MS) / 1000));
      const byPods = this.#pods.reportedByAll(byClock);
      const k = Math.max(byPods, forced);
      if (k >= 0) this.#emit(k);
      if (k < lastSecond - 1 && !this.#pods.stopping) this.#timers.push(setTimeout(tick, TICK_MS));
    };
    this.#timers.push(setTimeout(tick, t0 + 1000 + EMIT_GRACE_MS - Date.now()));
  }

  stop(): void {
    for (const t of this.#timers) clearTimeout(t);
  }

  /** After the run: every second not emitted yet, the storm's or the bystanders'. */
  emitRest(): void {
    const { storm, bystanders } = this.#counts;
    this.#emit(Math.max(storm.lastSecond(), bystanders?.lastSecond() ?? -1));
  }

  #emit(upTo: number): void {
    for (const s of this.#seconds(upTo)) this.#onSecond?.(s);
  }

  /** The storm's seconds up to `upTo`, each with the bystanders' same second attached. */
  #seconds(upTo: number): LoadSampleWithBystanders[] {
    const { storm, bystanders } = this.#counts;
    const seconds: LoadSampleWithBystanders[] = storm.emitUpTo(upTo);
    for (const s of seconds) {
      const { pods, workers } = this.#pods.live.peak(this.#t0 + s.t, this.#t0 + s.t + 1000);
      s.stormPods = pods;
      s.stormWorkers = workers;
      const cpu = this.#cpuMeter.second(Math.round(s.t / 1000));
      if (cpu) s.cpu = { ...cpu };
    }
    if (bystanders) {
      const byT = new Map(bystanders.emitUpTo(upTo).map((s) => [s.t, s]));
      for (const s of seconds) {
        const b = byT.get(s.t);
        if (b) s.bystanders = toBystanderSecond(b);
      }
    }
    return seconds;
  }
}
