// Runs a set of samplers, each on its own interval, writing every line through one NDJSON writer
// and handing it to listeners (the OOM detector, the progress display) as it is taken.
import { PeakTracker, type MemoryPeaks, type SampleLine } from '../contract/index.js';
import type { NdjsonWriter } from './ndjson-writer.js';
import type { Sampler } from './sampler.js';

export class SamplerLoop {
  readonly #samplers: Sampler[];
  readonly #writer: NdjsonWriter;
  readonly #clock: () => number;
  readonly #listeners = new Set<(line: SampleLine) => void>();
  readonly #timers: NodeJS.Timeout[] = [];
  readonly #busy = new Set<Sampler>();
  readonly #errors = new Map<string, { count: number; first: string }>();
  readonly #peaks = new PeakTracker();
  #memoryLines = 0;

  /** `clock` gives t in ms on the run's timeline. */
  constructor(samplers: Sampler[], writer: NdjsonWriter, clock: () => number) {
    this.#samplers = samplers;
    this.#writer = writer;
    this.#clock = clock;
  }

  onSample(fn: (line: SampleLine) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  /** Writes a line that did not come from a sampler (events, load seconds) on the same file. */
  emit(line: SampleLine): void {
    if (line.kind === 'memory') {
      this.#peaks.add(line);
      this.#memoryLines++;
    }
    this.#writer.write(line);
    for (const fn of this.#listeners) fn(line);
  }

  /** Takes one reading from each sampler now. */
  async tick(sampler: Sampler): Promise<void> {
    // A slow scrape is skipped rather than queued, so readings never pile up behind a stalled agent.
    if (this.#busy.has(sampler)) return;
    this.#busy.add(sampler);
    try {
      const line = await sampler.sample(this.#clock());
      if (line) this.emit(line);
    } catch (err) {
      // A source that vanished (agent exited, cgroup removed) yields no reading; every failure is
      // counted and the first one kept, so a path or permission problem is visible in the results.
      const e = this.#errors.get(sampler.name);
      if (e) e.count++;
      else this.#errors.set(sampler.name, { count: 1, first: (err as Error).message });
    } finally {
      this.#busy.delete(sampler);
    }
  }

  start(): void {
    for (const s of this.#samplers) {
      void this.tick(s);
      const timer = setInterval(() => void this.tick(s), s.intervalMs);
      timer.unref();
      this.#timers.push(timer);
    }
  }

  /** The peaks of every measure the memory lines carried; null when none was taken. */
  peaks(): MemoryPeaks | null {
    return this.#memoryLines > 0 ? this.#peaks.peaks() : null;
  }

  /** Failed readings per sampler: how many, and the first error's message. */
  errors(): Record<string, { count: number; first: string }> {
    return Object.fromEntries(this.#errors);
  }

  /** Stops the timers and takes one last reading of each sampler so the final peak is recorded. */
  async stop(): Promise<void> {
    for (const t of this.#timers.splice(0)) clearInterval(t);
    await Promise.all(this.#samplers.map((s) => this.tick(s)));
  }
}
