// The 100 ms memory series of an agent in a kind node, read from the host through the node
// container's cgroup: the pod slice (continuous across restarts) as usage and peak, in the
// project's MemorySample form.
import type { Sampler } from '../../sample/index.js';
import type { MemorySample } from '../../scenario/index.js';
import type { KindAgentCgroup } from './kind-cgroup.js';

export function kindMemorySampler(cg: () => KindAgentCgroup | null, limitBytes: number, intervalMs = 100): Sampler & { peakBytes(): number | null } {
  // null until a reading arrived: a peak nobody measured is not 0.
  let peak: number | null = null;
  return {
    name: 'kind-cgroup-memory',
    intervalMs,
    peakBytes: () => peak,
    sample(t: number): MemorySample | null {
      const c = cg();
      const pod = c?.readPod();
      if (!c || !pod) return null;
      // Kernels before 5.19 have no memory.peak on v2: the running maximum of the readings stands in.
      peak = Math.max(peak ?? 0, pod.peakBytes ?? pod.usageBytes, pod.usageBytes);
      return {
        kind: 'memory',
        t,
        usageBytes: pod.usageBytes,
        rssBytes: null,
        peakBytes: peak,
        limitBytes: pod.limitBytes ?? limitBytes,
        cpuSeconds: pod.cpuSeconds,
      };
    },
  };
}
