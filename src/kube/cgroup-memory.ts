// One memory cgroup directory read as the agent's memory: usage, the working set (usage less
// inactive file pages, as the kubelet counts it), RSS, the kernel's high-water mark, the limit, OOM
// kills and CPU seconds, on cgroup v1 or v2. Read from this host (a kind node's cgroup)
// and from inside the memory-sampler pod (its node's /sys/fs/cgroup) alike.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  inactiveFileBytes,
  memoryStatParts,
  limitHitsV1,
  readKeyed,
  readMemoryPressure,
  statRssBytes,
  workingSetBytes,
  type MemoryStatParts,
} from '../cgroup/index.js';

export type CgroupFlavour = 'v1' | 'v2';

/** kernelBytes, activeFileBytes, shmemBytes: what the working set holds beside RSS; null where not available. */
export interface CgroupMemory extends MemoryStatParts {
  usageBytes: number;
  /** usage − inactive file (memory.stat), what kubectl top shows; null when memory.stat could not be read. */
  workingSetBytes: number | null;
  /** Anonymous memory (memory.stat v1 total_rss, v2 anon); null when memory.stat could not be read. */
  rssBytes: number | null;
  /** High-water mark (v2 memory.peak, v1 max_usage_in_bytes); null when the kernel has none (v2 < 5.19). */
  peakBytes: number | null;
  limitBytes: number | null;
  oomKills: number;
  cpuSeconds: number | null;
  /** Charges that met the limit (v1 memory.failcnt, v2 memory.events max); null where unreadable. */
  limitHits: number | null;
  /** v2 memory.pressure totals (µs); null on v1 or without PSI. */
  stallMicros: { some: number; full: number } | null;
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
    const stat = readKeyed(join(dir, 'memory.stat'));
    return {
      usageBytes: usage,
      workingSetBytes: workingSetBytes(usage, inactiveFileBytes('v2', stat)),
      rssBytes: statRssBytes('v2', stat),
      ...memoryStatParts('v2', stat),
      peakBytes: readNumber(join(dir, 'memory.peak')),
      limitBytes: readNumber(join(dir, 'memory.max')),
      oomKills: flatKey(join(dir, 'memory.events'), 'oom_kill') ?? 0,
      cpuSeconds: usec === null ? null : usec / 1e6,
      limitHits: flatKey(join(dir, 'memory.events'), 'max'),
      stallMicros: readMemoryPressure(join(dir, 'memory.pressure')),
    };
  }
  const usage = readNumber(join(dir, 'memory.usage_in_bytes'));
  if (usage === null) return null;
  const limit = readNumber(join(dir, 'memory.limit_in_bytes'));
  const stat = readKeyed(join(dir, 'memory.stat'));
  return {
    usageBytes: usage,
    workingSetBytes: workingSetBytes(usage, inactiveFileBytes('v1', stat)),
    rssBytes: statRssBytes('v1', stat),
    ...memoryStatParts('v1', stat, readNumber(join(dir, 'memory.kmem.usage_in_bytes'))),
    peakBytes: readNumber(join(dir, 'memory.max_usage_in_bytes')),
    // v1 reports "no limit" as a huge page-rounded number.
    limitBytes: limit !== null && limit < 2 ** 62 ? limit : null,
    oomKills: flatKey(join(dir, 'memory.oom_control'), 'oom_kill') ?? 0,
    cpuSeconds: null,
    limitHits: limitHitsV1(readNumber(join(dir, 'memory.failcnt')), readNumber(join(dir, 'memory.memsw.limit_in_bytes'))),
    stallMicros: null,
  };
}
