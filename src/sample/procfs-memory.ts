// Reads of a single process's memory and CPU from procfs, and of a cgroup's CPU counters: the raw
// parsing is separate from file access so fixtures of both cgroup versions can test it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { statCpuSeconds } from '../util/procfs-stat.js';

export interface ProcessMemory {
  rssBytes: number;
  /** VmHWM: the kernel's own peak RSS of the process. */
  hwmBytes: number;
}

/** VmRSS and VmHWM from /proc/<pid>/status text; null when either is missing (a zombie has neither). */
export function parseProcStatus(text: string): ProcessMemory | null {
  const rss = /^VmRSS:\s+(\d+)\s*kB/m.exec(text);
  const hwm = /^VmHWM:\s+(\d+)\s*kB/m.exec(text);
  if (!rss || !hwm) return null;
  return { rssBytes: Number(rss[1]) * 1024, hwmBytes: Number(hwm[1]) * 1024 };
}

/** utime+stime in seconds from /proc/<pid>/stat text (fields 14 and 15; comm may contain spaces). */
export const parseProcStatCpuSeconds = statCpuSeconds;

/** v2 cpu.stat usage_usec in seconds. */
export function parseCpuStatV2(text: string): number | null {
  const m = /^usage_usec\s+(\d+)/m.exec(text);
  return m ? Number(m[1]) / 1e6 : null;
}

/** v1 cpuacct.usage (nanoseconds) in seconds. */
export function parseCpuacctUsage(text: string): number | null {
  const t = text.trim();
  return /^\d+$/.test(t) ? Number(t) / 1e9 : null;
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

export function readProcessMemory(pid: number, procRoot = '/proc'): ProcessMemory | null {
  const text = readText(join(procRoot, String(pid), 'status'));
  return text === null ? null : parseProcStatus(text);
}

export function readProcessCpuSeconds(pid: number, procRoot = '/proc'): number | null {
  const text = readText(join(procRoot, String(pid), 'stat'));
  return text === null ? null : parseProcStatCpuSeconds(text);
}

/** CPU seconds of a whole cgroup: v2 cpu.stat in the cgroup dir, v1 cpuacct.usage where a cpuacct dir is known. */
export function readCgroupCpuSeconds(version: 'v1' | 'v2', dir: string): number | null {
  if (version === 'v2') {
    const text = readText(join(dir, 'cpu.stat'));
    return text === null ? null : parseCpuStatV2(text);
  }
  const text = readText(join(dir, 'cpuacct.usage'));
  return text === null ? null : parseCpuacctUsage(text);
}

/**
 * Cumulative CPU seconds across agent restarts: each new PID starts at zero, so the last value
 * of the previous process is carried as a base.
 */
export class CpuAccumulator {
  #pid: number | null = null;
  #base = 0;
  #last = 0;

  update(pid: number | null, seconds: number | null): number | null {
    if (pid === null || seconds === null) return this.#pid === null ? null : this.#base + this.#last;
    if (pid !== this.#pid) {
      if (this.#pid !== null) this.#base += this.#last;
      this.#pid = pid;
      this.#last = 0;
    }
    this.#last = Math.max(this.#last, seconds);
    return this.#base + this.#last;
  }
}
