// The runner's side of the generator pods: readiness, the release of every pod together, and the
// per-second data pulled through the API server's pod proxy (not logs: log follow stops at
// rotation), merged into the same LoadSample series the local generator writes.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { RunError } from '../errors.js';
import { LoadAggregator, type IntervalData } from '../load/index.js';
import type { LoadSample } from '../scenario/index.js';
import type { GeneratorFinal } from './generator-server.js';
import { GENERATOR_PORT } from './objects.js';

export class GeneratorCollector {
  readonly agg = new LoadAggregator();
  readonly finals = new Map<string, GeneratorFinal>();
  #api: CoreV1Api;
  #namespace: string;
  #pods: string[];
  #next = new Map<string, number>();

  constructor(kc: KubeConfig, namespace: string, pods: string[]) {
    this.#api = kc.makeApiClient(CoreV1Api);
    this.#namespace = namespace;
    this.#pods = pods;
    for (const p of pods) this.agg.notePod({ uid: p, name: p });
  }

  #target(pod: string): string {
    return `${pod}:${GENERATOR_PORT}`;
  }

  async #get<T>(pod: string, path: string): Promise<T> {
    const text = await this.#api.connectGetNamespacedPodProxyWithPath({ name: this.#target(pod), namespace: this.#namespace, path });
    return (typeof text === 'string' ? JSON.parse(text) : text) as T;
  }

  /** True when every pod's workers are forked and waiting. */
  async allReady(): Promise<boolean> {
    const states = await Promise.all(this.#pods.map((p) => this.#get<GeneratorFinal>(p, 'ready').catch((err: unknown) => readyFromError(err))));
    const failed = states.find((f) => f?.failure);
    if (failed) throw new RunError(`generator pod ${this.#namespace}/${failed.pod} failed: ${failed.failure}`);
    return states.every((f) => f?.ready);
  }

  /** Releases every pod with the same origin and end (epoch ms). */
  async release(t0: number, endAt: number): Promise<void> {
    await Promise.all(
      this.#pods.map(async (p) => {
        try {
          await this.#api.connectPostNamespacedPodProxyWithPath({ name: this.#target(p), namespace: this.#namespace, path: `go-${t0}-${endAt}` });
        } catch (err) {
          throw new RunError(`generator pod ${this.#namespace}/${p} could not be released through the pod proxy: ${(err as Error).message}`, { cause: err });
        }
      }),
    );
  }

  /** Pulls new seconds from every pod; a pod that does not answer this time is asked again next time. */
  async pull(): Promise<void> {
    await Promise.all(
      this.#pods.map(async (p) => {
        try {
          const from = this.#next.get(p) ?? 0;
          const r = await this.#get<{ seconds: IntervalData[] }>(p, `seconds-from-${from}`);
          for (const s of r.seconds) {
            if (s.second < from) continue;
            this.agg.add({ uid: p, name: p }, s);
            this.#next.set(p, Math.max(this.#next.get(p) ?? 0, s.second + 1));
          }
        } catch {
          // The next pull asks from the same second again.
        }
      }),
    );
  }

  /** Seconds every pod has reported, ready to emit as LoadSamples. */
  emitComplete(): LoadSample[] {
    const upTo = Math.min(...this.#pods.map((p) => (this.#next.get(p) ?? 0) - 1));
    return upTo >= 0 ? this.agg.emitUpTo(upTo) : [];
  }

  /** The final dump of every pod that answers. */
  async collectFinals(): Promise<void> {
    await Promise.all(this.#pods.map(async (p) => this.#get<GeneratorFinal>(p, 'final').then((f) => void this.finals.set(p, f), () => undefined)));
  }

  /** After an interrupt: workers stop after their call in flight, before the namespace goes. */
  async stop(): Promise<void> {
    await Promise.all(
      this.#pods.map((p) => this.#api.connectPostNamespacedPodProxyWithPath({ name: this.#target(p), namespace: this.#namespace, path: 'stop' }).catch(() => undefined)),
    );
  }

  allFinished(): boolean {
    return this.#pods.every((p) => this.finals.get(p)?.finished);
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
