// CPU lists ("0-1,3") and cpuset cgroups: which CPUs a cgroup may use, filled in level by level as
// cgroup v1 requires, and moving a running process (every thread) between cpusets.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { enableControllers } from './delegation.js';
import type { CgroupVersion } from './host.js';

/** CPU numbers of a kernel CPU list ("0-2,5" → [0,1,2,5]), sorted and unique; null when malformed. */
export function parseCpuList(text: string): number[] | null {
  const t = text.trim();
  if (t === '') return [];
  const out = new Set<number>();
  for (const part of t.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) return null;
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    if (hi < lo || hi - lo > 4096) return null;
    for (let c = lo; c <= hi; c++) out.add(c);
  }
  return [...out].sort((a, b) => a - b);
}

/** The kernel's compact form of a CPU set: [0,1,2,5] → "0-2,5". */
export function formatCpuList(cpus: readonly number[]): string {
  const sorted = [...new Set(cpus)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(i === j ? String(sorted[i]) : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

function readTrim(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return '';
  }
}

/** The CPUs a cpuset directory's processes may run on (effective_cpus where the kernel has it). */
export function effectiveCpus(dir: string): number[] {
  return parseCpuList(readTrim(join(dir, 'cpuset.effective_cpus')) || readTrim(join(dir, 'cpuset.cpus'))) ?? [];
}

/**
 * mkdir -p of relPath below a cpuset base, leaving the leaf on `cpus`. v1 creates a cpuset with no
 * CPUs and no memory nodes, and refuses processes until both are set: every new level copies its
 * parent's, so the levels above the leaf stay as wide as the base. v2 leaves empty lists to mean
 * "the parent's", so only the leaf is written, once every level above has delegated the cpuset
 * controller to its children.
 */
export function createCpuset(version: CgroupVersion, base: string, relPath: string, cpus: string): string {
  let dir = base;
  for (const part of relPath.split('/').filter(Boolean)) {
    const parent = dir;
    dir = join(dir, part);
    if (version === 'v2') {
      const refused = enableControllers(parent, ['cpuset']);
      if (refused.length) throw new Error(`cannot pin cgroup ${relPath} to CPUs: ${parent} refused the cpuset controller (${refused.join(', ')})`);
    }
    mkdirSync(dir, { recursive: true });
    if (version === 'v1') {
      for (const file of ['cpuset.cpus', 'cpuset.mems']) {
        if (readTrim(join(dir, file)) === '') writeFileSync(join(dir, file), readTrim(join(parent, file)));
      }
    }
  }
  writeFileSync(join(dir, 'cpuset.cpus'), cpus);
  return dir;
}

/** Moves a running process, all its threads, into a cpuset directory (cgroup.procs). */
export function moveToCpuset(dir: string, pid: number): void {
  writeFileSync(join(dir, 'cgroup.procs'), String(pid));
}

/** The CPUs a process may run on, as the kernel reports it (/proc/<pid>/status Cpus_allowed_list). */
export function cpusAllowed(pid: number | 'self'): string | null {
  const m = /^Cpus_allowed_list:\s*(\S+)/m.exec(readTrim(`/proc/${pid}/status`));
  return m ? m[1]! : null;
}

/**
 * The CPUs this process is pinned to, or null when it may run on every online CPU. On cgroup v2 a
 * process moved into another cgroup takes that cgroup's cpuset, so what the runner starts in cgroups
 * of their own (pods) is pinned the same way explicitly; v1's separate cpuset hierarchy keeps a forked
 * child in its parent's cpuset by itself.
 */
export function ownPinnedCpus(): string | null {
  const own = cpusAllowed('self');
  const online = readTrim('/sys/devices/system/cpu/online');
  if (own === null || online === '') return null;
  const ownList = parseCpuList(own);
  const onlineList = parseCpuList(online);
  if (!ownList || !onlineList || ownList.length >= onlineList.length) return null;
  return formatCpuList(ownList);
}
