// The 100 ms memory series of an agent in a kind node, read from the host through the node
// container's cgroup: the pod slice (continuous across restarts) as usage, working set and peak, in the
// project's MemorySample form.
import { PeakTracker, type MemoryPeaks } from '../contract/index.js';
import { registerSampler, type Sampler, type SamplerOptions } from '../sample/index.js';
import type { MemorySample } from '../scenario/index.js';
import type { KindAgentCgroup } from './kind-cgroup.js';

export interface KindMemoryTarget {
  /** The agent pod's cgroup in its node (null until the watch has seen the pod). */
  cgroup: () => KindAgentCgroup | null;
  /** The limit to report when the cgroup has none. */
  limitBytes: number;
}

/** A memory sampler that also keeps the highest readings: the repetition's peaks. */
export interface KindMemorySampler extends Sampler {
  peaks(): MemoryPeaks | null;
}

function kindMemorySampler(target: KindMemoryTarget, opts: SamplerOptions = {}): KindMemorySampler {
  const { cgroup: cg, limitBytes } = target;
  const intervalMs = opts.intervalMs ?? 100;
  // null until a reading arrived: a peak nobody measured is not 0.
  let peak: number | null = null;
  const peaks = new PeakTracker();
  return {
    name: 'kind-cgroup-memory',
    intervalMs,
    peaks: () => (peak === null ? null : peaks.peaks()),
    sample(t: number): MemorySample | null {
      const c = cg();
      const pod = c?.readPod();
      if (!c || !pod) return null;
      // Kernels before 5.19 have no memory.peak on v2: the running maximum of the readings stands in.
      peak = Math.max(peak ?? 0, pod.peakBytes ?? pod.usageBytes, pod.usageBytes);
      const line: MemorySample = {
        kind: 'memory',
        t,
        usageBytes: pod.usageBytes,
        workingSetBytes: pod.workingSetBytes,
        rssBytes: pod.rssBytes,
        kernelBytes: pod.kernelBytes,
        activeFileBytes: pod.activeFileBytes,
        shmemBytes: pod.shmemBytes,
        peakBytes: peak,
        limitBytes: pod.limitBytes ?? limitBytes,
        cpuSeconds: pod.cpuSeconds,
        limitHits: pod.limitHits,
        ...(pod.stallMicros ? { stallSomeUs: pod.stallMicros.some, stallFullUs: pod.stallMicros.full } : {}),
      };
      peaks.add(line);
      return line;
    },
  };
}

declare module '../sample/sampler.js' {
  interface SamplerKinds {
    'kind-cgroup-memory': { target: KindMemoryTarget; sampler: KindMemorySampler };
  }
}

registerSampler('kind-cgroup-memory', kindMemorySampler);
