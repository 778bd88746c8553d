// The working set of a memory cgroup, as the kubelet and cAdvisor count it (kubectl top, eviction,
// container_memory_working_set_bytes): usage minus the inactive file pages in memory.stat. Page
// cache the cgroup's processes wrote and no longer touch is charged to it, counts in usage and
// the kernel reclaims it before any OOM kill; the working set leaves it out. Beside RSS it holds
// kernel memory (socket buffers, slab), active file pages and shared memory, read here too.

/** The cgroup version's memory.stat names: v1 `total_*` (the cgroup and its descendants), v2 flat (already hierarchical). */
const STAT_KEYS = {
  v1: { inactiveFile: 'total_inactive_file', rss: 'total_rss', activeFile: 'total_active_file', shmem: 'total_shmem' },
  v2: { inactiveFile: 'inactive_file', rss: 'anon', activeFile: 'active_file', shmem: 'shmem' },
} as const;

/**
 * v2 kernel memory on kernels before 5.18, which have no `kernel` line: the parts it sums. Socket
 * buffers (`sock`) are charged to memory.current but kept out of `kernel`, so they are added on both.
 */
const V2_KERNEL_PARTS = ['slab', 'kernel_stack', 'pagetables', 'percpu'] as const;

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

/** What the working set holds beside RSS, from the same reading; null: not available on this cgroup. */
export interface MemoryStatParts {
  /** Kernel memory charged to the cgroup: slab (struct sock, files), socket buffers, stacks, page tables. */
  kernelBytes: number | null;
  /** File pages on the active list (still counted in the working set). */
  activeFileBytes: number | null;
  /** Shared memory (tmpfs, shm): file pages on the anonymous lists, so never inactive file. */
  shmemBytes: number | null;
}

/**
 * The parts of the working set beside RSS. v1 keeps kernel memory in its own counter
 * (memory.kmem.usage_in_bytes, read by the caller: `kmemUsage`), charged to usage too; a kernel
 * booted with cgroup.memory=nokmem has no such file or leaves it at 0, and no cgroup with a process
 * in it holds no kernel memory at all, so 0 is "not available", never a measurement. v2 has it in
 * memory.stat: `kernel` (5.18+) or the sum of its parts, plus `sock`.
 */
export function memoryStatParts(version: 'v1' | 'v2', stat: ReadonlyMap<string, number>, kmemUsage: number | null = null): MemoryStatParts {
  const keys = STAT_KEYS[version];
  return {
    kernelBytes: version === 'v1' ? (kmemUsage !== null && kmemUsage > 0 ? kmemUsage : null) : v2KernelBytes(stat),
    activeFileBytes: stat.get(keys.activeFile) ?? null,
    shmemBytes: stat.get(keys.shmem) ?? null,
  };
}

function v2KernelBytes(stat: ReadonlyMap<string, number>): number | null {
  const sock = stat.get('sock') ?? 0;
  const kernel = stat.get('kernel');
  if (kernel !== undefined) return kernel + sock;
  if (!V2_KERNEL_PARTS.some((k) => stat.has(k))) return null;
  return V2_KERNEL_PARTS.reduce((sum, k) => sum + (stat.get(k) ?? 0), sock);
}
