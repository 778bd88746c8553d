// Real memory of worker processes: PSS from /proc/<pid>/smaps_rollup, which charges shared pages
// (the node binary, shared libraries) by the share, unlike VmRSS which charges them in full.
import { readFile } from 'node:fs/promises';
import { statCpuSeconds } from '../util/procfs-stat.js';

/** PSS and private (USS: Private_Clean + Private_Dirty) bytes, or null when the process is gone. */
export async function readPssAndPrivate(pid: number): Promise<{ pss: number; private: number } | null> {
  try {
    const text = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN) * 1024;
    const pss = kb('Pss');
    return Number.isFinite(pss) ? { pss, private: kb('Private_Clean') + kb('Private_Dirty') } : null;
  } catch {
    return null;
  }
}

export interface MemoryStats {
  median: number;
  max: number;
  samples: number;
  /**
   * Median private memory (USS). PSS also charges each process its share of the pages it shares
   * (the node binary), so it moves with how many node processes run on the machine; USS does not.
   */
  privateMedian?: number;
}

function medianOf(sorted: number[]): number {
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Median and max PSS over the given processes (those still alive); null when none could be read. */
export async function samplePss(pids: readonly number[]): Promise<MemoryStats | null> {
  const read = (await Promise.all(pids.map(readPssAndPrivate))).filter((v): v is { pss: number; private: number } => v !== null);
  if (read.length === 0) return null;
  const values = read.map((r) => r.pss).sort((a, b) => a - b);
  return {
    median: medianOf(values),
    max: values[values.length - 1]!,
    samples: values.length,
    privateMedian: medianOf(read.map((r) => r.private).sort((a, b) => a - b)),
  };
}

/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat; null when gone. */
export async function readCpuSeconds(pid: number): Promise<number | null> {
  try {
    return statCpuSeconds(await readFile(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}
