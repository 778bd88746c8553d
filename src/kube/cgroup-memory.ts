// One memory cgroup directory read as the agent's memory: usage, the kernel's high-water mark, the
// limit, OOM kills and CPU seconds, on cgroup v1 or v2. Read from this host (a kind node's cgroup)
// and from inside the memory-sampler pod (its node's /sys/fs/cgroup) alike.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export type CgroupFlavour = 'v1' | 'v2';

export interface CgroupMemory {
  usageBytes: number;
  /** High-water mark (v2 memory.peak, v1 max_usage_in_bytes); null when the kernel has none (v2 < 5.19). */
  peakBytes: number | null;
  limitBytes: number | null;
  oomKills: number;
  cpuSeconds: number | null;
}

function readNumber(file: string): number | null {
  try {
    const t = readFileSync(file, 'utf8').trim();
    return t === 'max' ? null : Number(t);
  } catch {
    return null;
  }
}

function flatKey(file: string, key: string): number | null {
  try {
    const m = new RegExp(`^${key} (\\d+)$`, 'm').exec(readFileSync(file, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** Reads one memory cgroup directory; null when it is gone (a container scope after its death). */
export function readCgroupMemory(dir: string, version: CgroupFlavour): CgroupMemory | null {
  if (version === 'v2') {
    const usage = readNumber(join(dir, 'memory.current'));
    if (usage === null) return null;
    const usec = flatKey(join(dir, 'cpu.stat'), 'usage_usec');
    return {
      usageBytes: usage,
      peakBytes: readNumber(join(dir, 'memory.peak')),
      limitBytes: readNumber(join(dir, 'memory.max')),
      oomKills: flatKey(join(dir, 'memory.events'), 'oom_kill') ?? 0,
      cpuSeconds: usec === null ? null : usec / 1e6,
    };
  }
  const usage = readNumber(join(dir, 'memory.usage_in_bytes'));
  if (usage === null) return null;
  const limit = readNumber(join(dir, 'memory.limit_in_bytes'));
  return {
    usageBytes: usage,
    peakBytes: readNumber(join(dir, 'memory.max_usage_in_bytes')),
    // v1 reports "no limit" as a huge page-rounded number.
    limitBytes: limit !== null && limit < 2 ** 62 ? limit : null,
    oomKills: flatKey(join(dir, 'memory.oom_control'), 'oom_kill') ?? 0,
    cpuSeconds: null,
  };
}
