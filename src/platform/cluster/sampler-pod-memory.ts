// The runner's side of the memory-sampler pod: names the agent container to follow (again after
// every restart), pulls the 100 ms readings through the API server's pod proxy once a second and
// writes them as the project's MemorySample lines on the run's timeline. Its peak is null until a
// reading arrived: a peak nobody measured is never a 0.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { PeakTracker, type MemoryPeaks } from '../../contract/index.js';
import type { MemorySample } from '../../scenario/index.js';
import type { MemoryReading } from '../../kube/index.js';
import { MEMORY_SAMPLER_POD, MEMORY_SAMPLER_PORT } from '../../kube/index.js';
import { withinMs } from '../../util/index.js';

/** A pull's bound: a sampler pod on a node that went away must not hold the run's end. */
const CALL_MS = 5000;

export class PodMemorySampler {
  #api: CoreV1Api;
  #namespace: string;
  #limitBytes: number;
  #next = 0;
  readonly #peaks = new PeakTracker();
  #read = false;
  #pendingTarget: string | null = null;
  #timer: NodeJS.Timeout | null = null;
  #emit: ((line: MemorySample) => void) | null = null;
  #clock: ((at: number) => number) | null = null;
  failures = 0;
  /** The node's cgroup version, as the sampler pod found it; null until it answered. */
  flavour: 'v1' | 'v2' | null = null;

  constructor(kc: KubeConfig, namespace: string, limitBytes: number) {
    this.#api = kc.makeApiClient(CoreV1Api);
    this.#namespace = namespace;
    this.#limitBytes = limitBytes;
  }

  #name(): string {
    return `${MEMORY_SAMPLER_POD}:${MEMORY_SAMPLER_PORT}`;
  }

  /** The agent container to follow; sent now, and again at the next pull if the pod did not take it. */
  async follow(podUid: string, containerID: string): Promise<void> {
    this.#pendingTarget = `target-${podUid}-${containerID.replace(/^[a-z0-9-]+:\/\//, '')}`;
    await this.#sendTarget();
  }

  async #sendTarget(): Promise<void> {
    const path = this.#pendingTarget;
    if (!path) return;
    try {
      await withinMs(this.#api.connectPostNamespacedPodProxyWithPath({ name: this.#name(), namespace: this.#namespace, path }), CALL_MS, path);
      if (this.#pendingTarget === path) this.#pendingTarget = null;
    } catch {
      // Asked again at the next pull.
    }
  }

  /** Pulls the new readings; each becomes a MemorySample with t from `clock(at)`. */
  async pull(emit: (line: MemorySample) => void, clock: (at: number) => number): Promise<void> {
    await this.#sendTarget();
    let r: { readings: MemoryReading[]; flavour?: 'v1' | 'v2' | null };
    try {
      const path = `readings-from-${this.#next}`;
      const text = await withinMs(this.#api.connectGetNamespacedPodProxyWithPath({ name: this.#name(), namespace: this.#namespace, path }), CALL_MS, path);
      r = (typeof text === 'string' ? JSON.parse(text) : text) as typeof r;
      if (r.flavour) this.flavour = r.flavour;
    } catch {
      this.failures++;
      return;
    }
    for (const x of r.readings) {
      if (x.i < this.#next) continue;
      this.#next = x.i + 1;
      const line: MemorySample = {
        kind: 'memory',
        t: clock(x.at),
        usageBytes: x.usageBytes,
        workingSetBytes: x.workingSetBytes ?? null,
        rssBytes: x.rssBytes ?? null,
        peakBytes: x.peakBytes,
        limitBytes: x.limitBytes ?? this.#limitBytes,
        cpuSeconds: x.cpuSeconds,
        ...(x.limitHits !== undefined ? { limitHits: x.limitHits } : {}),
        ...(typeof x.stallSomeUs === 'number' && typeof x.stallFullUs === 'number' ? { stallSomeUs: x.stallSomeUs, stallFullUs: x.stallFullUs } : {}),
      };
      this.#peaks.add(line);
      this.#read = true;
      emit(line);
    }
  }

  /** Pulls once a second until stop(). */
  start(emit: (line: MemorySample) => void, clock: (at: number) => number): void {
    this.#emit = emit;
    this.#clock = clock;
    this.#timer = setInterval(() => void this.pull(emit, clock), 1000);
    this.#timer.unref();
  }

  /** Stops the pulls after a last one (the final peak). */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    if (this.#emit && this.#clock) await this.pull(this.#emit, this.#clock);
  }

  /** The peaks of every measure read; null when no reading ever arrived (unmeasured, never 0). */
  peaks(): MemoryPeaks | null {
    return this.#read ? this.#peaks.peaks() : null;
  }
}
