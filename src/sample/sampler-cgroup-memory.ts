// Agent memory from its memory cgroup: usage, the working set (usage less inactive file pages), RSS
// and the working set's other parts (kernel memory, active file, shmem), the kernel's high-water mark
// of usage (so a spike between two 100 ms samples still counts) and CPU seconds.
import type { MemorySample } from '../contract/index.js';
import { CpuAccumulator, readCgroupCpuSeconds, readProcessCpuSeconds } from './procfs-memory.js';
import { registerSampler, type Sampler, type SamplerTarget } from './sampler.js';

export function cgroupMemorySampler(target: SamplerTarget, opts: { intervalMs?: number } = {}): Sampler {
  const cgroup = target.cgroup;
  if (!cgroup) throw new Error('the cgroup-memory sampler needs a cgroup');
  const cpu = new CpuAccumulator();
  // The peak is kept here too: a v2 kernel without a resettable memory.peak, or a cgroup reset
  // between restarts, must not make the reported peak go down.
  let peak = 0;
  return {
    name: 'cgroup-memory',
    intervalMs: opts.intervalMs ?? 100,
    sample(t): MemorySample {
      // An unreadable memory file (cgroup gone, a path or permission problem) throws: the sampler
      // loop counts it as a failed reading, never a reading of 0 that would pass maxPeakMemory.
      const m = cgroup.readMemory();
      peak = Math.max(peak, m.peakBytes ?? m.usageBytes, m.usageBytes);
      let cpuSeconds: number | null;
      if (cgroup.version === 'v2') cpuSeconds = readCgroupCpuSeconds('v2', cgroup.path);
      else if (target.cpuacctDir) cpuSeconds = readCgroupCpuSeconds('v1', target.cpuacctDir);
      else {
        const pid = target.pid?.() ?? null;
        cpuSeconds = cpu.update(pid, pid === null ? null : readProcessCpuSeconds(pid, target.procRoot));
      }
      return {
        kind: 'memory',
        t,
        usageBytes: m.usageBytes,
        workingSetBytes: m.workingSetBytes,
        rssBytes: m.rssBytes,
        kernelBytes: m.kernelBytes,
        activeFileBytes: m.activeFileBytes,
        shmemBytes: m.shmemBytes,
        peakBytes: peak,
        limitBytes: m.limitBytes ?? target.limitBytes ?? 0,
        cpuSeconds,
        limitHits: m.limitHits,
        ...(m.stallMicros ? { stallSomeUs: m.stallMicros.some, stallFullUs: m.stallMicros.full } : {}),
      };
    },
  };
}

registerSampler('cgroup-memory', cgroupMemorySampler);
