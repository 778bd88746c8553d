// The runner's side of one group of load pods (the storm's generators, or the bystanders):
// readiness, the release of every pod together, and the per-second data pulled through the API
// server's pod proxy (not logs: log follow stops at rotation), merged into LoadSample seconds. Pods
// can leave (churned: their data so far is kept) and join (their replacements, released late).
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { RunError } from '../../errors.js';
import { LoadAggregator } from '../../load/index.js';
import type { GeneratorFinal, GeneratorParts } from '../../kube/index.js';
import { GENERATOR_PORT } from '../../kube/index.js';
import { withinMs } from '../../util/index.js';

/** Each call's bound: a pod on a node that went away is asked again later, not waited on for minutes. */
const CALL_MS = 10_000;

export class GeneratorCollector {
  readonly agg = new LoadAggregator();
  readonly finals = new Map<string, GeneratorFinal>();
  #api: CoreV1Api;
  #namespace: string;
  /** Pods the run waits for and pulls from. */
  #pods: string[];
  /** Every pod that ever took part, left ones included (gaps and worker counts). */
  #everyPod: string[];
  /** Pods that joined after the release: they hold back no second until they have reported one. */
  #joined = new Set<string>();
  /** Per pod: the index of the next part to pull, and the last second it has sent all of. */
  #next = new Map<string, number>();
  #complete = new Map<string, number>();
  #release: { t0: number; endAt: number } | null = null;

  constructor(kc: KubeConfig, namespace: string, pods: string[]) {
    this.#api = kc.makeApiClient(CoreV1Api);
    this.#namespace = namespace;
    this.#pods = [...pods];
    this.#everyPod = [...pods];
    for (const p of pods) this.agg.notePod({ uid: p, name: p });
  }

  get pods(): readonly string[] {
    return this.#pods;
  }

  #target(pod: string): string {
    return `${pod}:${GENERATOR_PORT}`;
  }

  async #get<T>(pod: string, path: string): Promise<T> {
    const text = await withinMs(
      this.#api.connectGetNamespacedPodProxyWithPath({ name: this.#target(pod), namespace: this.#namespace, path }),
      CALL_MS,
      `GET ${pod}/${path}`,
    );
    return (typeof text === 'string' ? JSON.parse(text) : text) as T;
  }

  async #ready(pods: readonly string[]): Promise<boolean> {
    const states = await Promise.all(pods.map((p) => this.#get<GeneratorFinal>(p, 'ready').catch((err: unknown) => readyFromError(err))));
    const failed = states.find((f) => f?.failure);
    if (failed) throw new RunError(`generator pod ${this.#namespace}/${failed.pod} failed: ${failed.failure}`);
    return states.every((f) => f?.ready);
  }

  /** True when every pod's workers are forked and waiting. */
  allReady(): Promise<boolean> {
    return this.#ready(this.#pods);
  }

  async #go(pod: string, t0: number, endAt: number): Promise<void> {
    try {
      await this.#api.connectPostNamespacedPodProxyWithPath({ name: this.#target(pod), namespace: this.#namespace, path: `go-${t0}-${endAt}` });
    } catch (err) {
      throw new RunError(`generator pod ${this.#namespace}/${pod} could not be released through the pod proxy: ${(err as Error).message}`, { cause: err });
    }
  }

  /** Releases every pod with the same origin and end (epoch ms). */
  async release(t0: number, endAt: number): Promise<void> {
    this.#release = { t0, endAt };
    await Promise.all(this.#pods.map((p) => this.#go(p, t0, endAt)));
  }

  /** A pod that left the run (deleted by a fault): what it reported is kept, nothing more is asked of it. */
  remove(pod: string): void {
    this.#pods = this.#pods.filter((p) => p !== pod);
  }

  /**
   * A replacement pod: waits until its workers are ready, then releases it with the run's origin
   * and end, so its seconds land on the same timeline (it joins the running load, as the local
   * runner's replacement pods do). Resolves false when stopped() turns true or the time runs out first.
   */
  async join(pod: string, opts: { timeoutMs: number; stopped: () => boolean }): Promise<boolean> {
    this.#pods.push(pod);
    this.#everyPod.push(pod);
    this.#joined.add(pod);
    this.agg.notePod({ uid: pod, name: pod });
    const deadline = Date.now() + opts.timeoutMs;
    while (!opts.stopped() && Date.now() < deadline) {
      if (await this.#ready([pod]).catch(() => false)) {
        if (!this.#release) return true;
        await this.#go(pod, this.#release.t0, this.#release.endAt);
        return true;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    return false;
  }

  /** Pulls new parts of seconds from every pod; a pod that does not answer this time is asked again next time. */
  async pull(): Promise<void> {
    await Promise.all(
      this.#pods.map(async (p) => {
        try {
          const from = this.#next.get(p) ?? 0;
          const r = await this.#get<GeneratorParts>(p, `parts-from-${from}`);
          for (const part of r.parts) this.agg.add({ uid: p, name: p }, part);
          this.#next.set(p, r.next);
          this.#complete.set(p, Math.max(this.#complete.get(p) ?? -1, r.complete));
        } catch {
          // The next pull asks from the same index again.
        }
      }),
    );
  }

  /** The last second every pod has reported (-1 when some pod has reported none yet); joiners count once they have reported. */
  completeUpTo(): number {
    const counted = this.#pods.filter((p) => !this.#joined.has(p) || (this.#complete.get(p) ?? -1) >= 0);
    if (!counted.length) return this.agg.lastSecond();
    return Math.min(...counted.map((p) => this.#complete.get(p) ?? -1));
  }

  /** The final dump of every pod that answers. */
  async collectFinals(): Promise<void> {
    await Promise.all(
      this.#pods.map(async (p) =>
        this.#get<GeneratorFinal>(p, 'final').then(
          (f) => void this.finals.set(p, f),
          () => undefined,
        ),
      ),
    );
  }

  /** After an interrupt: workers stop after their call in flight, before the namespace goes. */
  async stop(): Promise<void> {
    await Promise.all(
      this.#pods.map((p) =>
        withinMs(
          this.#api.connectPostNamespacedPodProxyWithPath({ name: this.#target(p), namespace: this.#namespace, path: 'stop' }),
          CALL_MS,
          `${p} stop`,
        ).catch(() => undefined),
      ),
    );
  }

  allFinished(): boolean {
    return this.#pods.every((p) => this.finals.get(p)?.finished);
  }

  /** Each pod's longest gap without a success, null for a pod whose final dump never came (it is charged the whole phase). */
  longestOkGaps(): Array<number | null> {
    return this.#everyPod.map((p) => this.finals.get(p)?.longestOkGapMs ?? null);
  }

  /** One real call to the agent from inside one of the pods (GET probe): true when the agent answered. */
  async probe(): Promise<boolean> {
    for (const p of this.#pods) {
      try {
        return (await this.#get<{ answered: boolean }>(p, 'probe')).answered === true;
      } catch {
        // That pod is gone or not serving: ask the next.
      }
    }
    return false;
  }

  /** Pods that took part, left and joined ones included. */
  get podCount(): number {
    return this.#everyPod.length;
  }
}

/** The 503 of a pod not ready yet carries its state in the body (ApiException.body). */
function readyFromError(err: unknown): GeneratorFinal | null {
  const body = (err as { body?: unknown }).body;
  try {
    return typeof body === 'string' ? (JSON.parse(body) as GeneratorFinal) : ((body as GeneratorFinal) ?? null);
  } catch {
    return null;
  }
}
