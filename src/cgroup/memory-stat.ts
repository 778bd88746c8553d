// The working set of a memory cgroup, as the kubelet and cAdvisor count it (kubectl top, eviction,
// container_memory_working_set_bytes): usage minus the inactive file pages in memory.stat. Page
// cache the cgroup's processes wrote and no longer touch is charged to it, counts in usage and
// the kernel reclaims it before any OOM kill; the working set leaves it out.

/** The cgroup version's memory.stat names: v1 `total_*` (the cgroup and its descendants), v2 flat (already hierarchical). */
const STAT_KEYS = {
  v1: { inactiveFile: 'total_inactive_file', rss: 'total_rss' },
  v2: { inactiveFile: 'inactive_file', rss: 'anon' },
} as const;

/** Inactive file pages charged to the cgroup (bytes); null when memory.stat has no such line. */
export function inactiveFileBytes(version: 'v1' | 'v2', stat: ReadonlyMap<string, number>): number | null {
  return stat.get(STAT_KEYS[version].inactiveFile) ?? null;
}

/** Anonymous memory charged to the cgroup (v1 total_rss, else rss; v2 anon); null when memory.stat has no such line. */
export function statRssBytes(version: 'v1' | 'v2', stat: ReadonlyMap<string, number>): number | null {
  return stat.get(STAT_KEYS[version].rss) ?? (version === 'v1' ? (stat.get('rss') ?? null) : null);
}

/**
 * usage − inactive file, never below 0 (the two files are read a moment apart, and v1's usage is a
 * per-CPU-batched counter that can lag memory.stat); null when memory.stat gave no inactive_file:
 * never usage standing in for it.
 */
export function workingSetBytes(usageBytes: number, inactiveFile: number | null): number | null {
  if (inactiveFile === null) return null;
  return Math.max(0, usageBytes - inactiveFile);
}
