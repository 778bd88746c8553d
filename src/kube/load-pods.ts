// Every load pod of a variant run, as the runner sees them: the storm's generator pods and the
// bystander pods (load.bystanders), readied and released together, their seconds merged into the
// storm's LoadSample series with the bystanders' same second attached as `bystanders` — the form
// the local generator writes — and at the end the bystanders' BystanderRun for results.json.
import type { KubeConfig } from '@kubernetes/client-node';
import { bystanderRunOf, toBystanderSecond, type BystanderRun, type LoadSampleWithBystanders } from '../load/index.js';
import type { Outcome } from '../scenario/index.js';
import { GeneratorCollector } from './generator-collector.js';
import { bystanderPodName, generatorPodName } from './names.js';
import type { KindLoad } from './variant.js';

export interface LoadPodsResult {
  counts: Record<Outcome, number>;
  histograms: Partial<Record<Outcome, string>>;
  bystanders?: BystanderRun;
}

export class LoadPods {
  readonly storm: GeneratorCollector;
  readonly bystanders: GeneratorCollector | null;
  readonly #load: KindLoad;

  constructor(kc: KubeConfig, namespace: string, load: KindLoad) {
    this.#load = load;
    this.storm = new GeneratorCollector(kc, namespace, Array.from({ length: load.pods }, (_, i) => generatorPodName(i)));
    this.bystanders = load.bystanders ? new GeneratorCollector(kc, namespace, Array.from({ length: load.bystanders.pods }, (_, i) => bystanderPodName(i))) : null;
  }

  #all(): GeneratorCollector[] {
    return this.bystanders ? [this.storm, this.bystanders] : [this.storm];
  }

  async allReady(): Promise<boolean> {
    const ready = await Promise.all(this.#all().map((c) => c.allReady()));
    return ready.every(Boolean);
  }

  /** Storm and bystanders start with the same origin and end. */
  async release(t0: number, endAt: number): Promise<void> {
    await Promise.all(this.#all().map((c) => c.release(t0, endAt)));
  }

  async pull(): Promise<void> {
    await Promise.all(this.#all().map((c) => c.pull()));
  }

  /** Seconds every pod of both groups has reported. */
  emitComplete(): LoadSampleWithBystanders[] {
    const upTo = Math.min(...this.#all().map((c) => c.completeUpTo()));
    return upTo >= 0 ? this.#emit(upTo) : [];
  }

  /** Everything still pending (the end of the run). */
  emitAll(): LoadSampleWithBystanders[] {
    return this.#emit(Math.max(...this.#all().map((c) => c.agg.lastSecond())));
  }

  #emit(upTo: number): LoadSampleWithBystanders[] {
    const storm: LoadSampleWithBystanders[] = this.storm.agg.emitUpTo(upTo);
    if (this.bystanders) {
      const byT = new Map(this.bystanders.agg.emitUpTo(upTo).map((s) => [s.t, s]));
      for (const s of storm) {
        const b = byT.get(s.t);
        if (b) s.bystanders = toBystanderSecond(b);
      }
    }
    return storm;
  }

  async collectFinals(): Promise<void> {
    await Promise.all(this.#all().map((c) => c.collectFinals()));
  }

  allFinished(): boolean {
    return this.#all().every((c) => c.allFinished());
  }

  async stop(): Promise<void> {
    await Promise.all(this.#all().map((c) => c.stop()));
  }

  /** The storm's totals and histograms, and the bystanders' run; `durationMs` is the load phase actually run. */
  result(durationMs: number): LoadPodsResult {
    const out: LoadPodsResult = { counts: { ...this.storm.agg.totals }, histograms: this.storm.agg.encodedWholeRun() };
    if (this.bystanders && this.#load.bystanders) {
      out.bystanders = bystanderRunOf(this.bystanders.agg, this.bystanders.longestOkGaps(), this.#load.bystanders.workersPerPod, durationMs);
    }
    return out;
  }

  destroy(): void {
    for (const c of this.#all()) c.agg.destroy();
  }
}
