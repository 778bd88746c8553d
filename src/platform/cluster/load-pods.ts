// Every load pod of a variant run, as the runner sees them: the storm's generator pods and the
// bystander pods (load.bystanders), readied and released together, their seconds merged into the
// storm's LoadSample series with the bystanders' same second attached as `bystanders` — the form
// the local generator writes — and at the end the bystanders' BystanderRun for results.json.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { bystanderRunOf, toBystanderSecond, type BystanderRun, type LoadSampleWithBystanders } from '../../load/index.js';
import type { Outcome } from '../../scenario/index.js';
import { sleep } from '../../util/index.js';
import { applyObjects } from './apply.js';
import { GeneratorCollector } from './generator-collector.js';
import type { KubeObject } from '../../kube/index.js';
import { bystanderPodName, generatorPodName } from '../../kube/index.js';
import type { ClusterLoad } from '../../kube/index.js';

export interface LoadPodsResult {
  counts: Record<Outcome, number>;
  histograms: Partial<Record<Outcome, string>>;
  bystanders?: BystanderRun;
  /**
   * The workers' client as the load pods ran it (from their final dumps), and why it is not the one
   * asked for (native where the image carries no worker binary); absent when no pod reported one.
   */
  client?: { ran: string; fallback?: string };
}

/** How long a re-created storm pod may take to fork its workers before it is given up. */
const JOIN_TIMEOUT_MS = 180_000;

export class LoadPods {
  readonly storm: GeneratorCollector;
  readonly bystanders: GeneratorCollector | null;
  readonly #load: ClusterLoad;
  readonly #kc: KubeConfig;
  readonly #namespace: string;
  #created = 0;
  #joins: Array<Promise<boolean>> = [];
  #ended = false;

  constructor(kc: KubeConfig, namespace: string, load: ClusterLoad) {
    this.#load = load;
    this.#kc = kc;
    this.#namespace = namespace;
    this.storm = new GeneratorCollector(
      kc,
      namespace,
      Array.from({ length: load.pods }, (_, i) => generatorPodName(i)),
    );
    this.bystanders = load.bystanders
      ? new GeneratorCollector(
          kc,
          namespace,
          Array.from({ length: load.bystanders.pods }, (_, i) => bystanderPodName(i)),
        )
      : null;
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
    this.#ended = true;
    await Promise.all(this.#all().map((c) => c.stop()));
  }

  /** The load phase is over: re-created pods still starting are not released any more. */
  end(): Promise<boolean[]> {
    this.#ended = true;
    return Promise.all(this.#joins);
  }

  /**
   * pod-churn: deletes `count` storm pods (grace period 0) and creates new ones under new names (new
   * UIDs, not yet in the kubelet's list when the agent first sees them) that join the running load
   * once their workers are up — the runner is the storm pods' controller. What the deleted pods had
   * reported is kept. Resolves with what was done.
   */
  async replaceStormPods(count: number, render: (name: string) => KubeObject): Promise<string> {
    const api = this.#kc.makeApiClient(CoreV1Api);
    const victims = this.storm.pods.slice(0, count);
    const created: string[] = [];
    await Promise.all(
      victims.map(async (old) => {
        this.storm.remove(old);
        await api.deleteNamespacedPod({ name: old, namespace: this.#namespace, gracePeriodSeconds: 0 }).catch((err: { code?: number }) => {
          if (err.code !== 404) throw err;
        });
        const name = `generator-c${++this.#created}`;
        created.push(name);
        await applyObjects(this.#kc, [render(name)]);
        this.#joins.push(this.storm.join(name, { timeoutMs: JOIN_TIMEOUT_MS, stopped: () => this.#ended }));
      }),
    );
    return `deleted storm pod${victims.length === 1 ? '' : 's'} ${victims.join(', ')} (grace period 0) and created ${created.join(', ')} in their place (new UIDs; they join the load once their workers are up)`;
  }

  /** Resolves once the agent answers a real call made from inside a load pod (bystanders first); rejects when the signal aborts. */
  async waitAgentAnswers(signal: AbortSignal): Promise<void> {
    for (;;) {
      signal.throwIfAborted();
      for (const c of [...(this.bystanders ? [this.bystanders] : []), this.storm]) if (await c.probe()) return;
      await sleep(250, signal);
    }
  }

  /** The storm's totals and histograms, and the bystanders' run; `durationMs` is the load phase actually run. */
  result(durationMs: number): LoadPodsResult {
    const out: LoadPodsResult = { counts: { ...this.storm.agg.totals }, histograms: this.storm.agg.encodedWholeRun() };
    if (this.bystanders && this.#load.bystanders) {
      out.bystanders = bystanderRunOf(this.bystanders.agg, this.bystanders.longestOkGaps(), this.#load.bystanders.workersPerPod, durationMs);
    }
    // Every pod runs the same image: one that fell back speaks for them all.
    const finals = this.#all()
      .flatMap((c) => [...c.finals.values()])
      .filter((f) => f.client);
    const said = finals.find((f) => f.clientFallback) ?? finals[0];
    if (said) out.client = { ran: said.client!, ...(said.clientFallback ? { fallback: said.clientFallback } : {}) };
    return out;
  }

  destroy(): void {
    for (const c of this.#all()) c.agg.destroy();
  }
}
