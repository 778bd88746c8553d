// Agent memory by PID (VmRSS, VmHWM): for an external agent we cannot put in a cgroup, and for the
// emulated-OOM mode where no cgroup could be created.
import type { MemorySample } from '../contract/index.js';
import { CpuAccumulator, readProcessCpuSeconds, readProcessMemory } from './procfs-memory.js';
import { registerSampler, type Sampler, type SamplerTarget } from './sampler.js';

export function processMemorySampler(target: SamplerTarget, opts: { intervalMs?: number } = {}): Sampler {
  const getPid = target.pid;
  if (!getPid) throw new Error('the process-memory sampler needs a pid');
  const cpu = new CpuAccumulator();
  let peak = 0;
  return {
    name: 'process-memory',
    intervalMs: opts.intervalMs ?? 100,
    sample(t): MemorySample | null {
      const pid = getPid();
      if (pid === null) return null;
      const m = readProcessMemory(pid, target.procRoot);
      if (!m) return null;
      // VmHWM is per process: across restarts the highest of them is the placement's peak.
      peak = Math.max(peak, m.hwmBytes, m.rssBytes);
      return {
        kind: 'memory',
        t,
        usageBytes: m.rssBytes,
        // No page cache is charged to a process's RSS: without a cgroup, all three figures are its RSS.
        workingSetBytes: m.rssBytes,
        rssBytes: m.rssBytes,
        peakBytes: peak,
        limitBytes: target.limitBytes ?? 0,
        cpuSeconds: cpu.update(pid, readProcessCpuSeconds(pid, target.procRoot)),
      };
    },
  };
}

registerSampler('process-memory', processMemorySampler);
