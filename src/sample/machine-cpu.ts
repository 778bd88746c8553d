// The whole machine's CPU over an interval, from /proc/stat: how busy it was while a storm ran, so a
// storm the machine held back is seen as such (with the harness's own share beside it).
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';

export interface MachineCpuReading {
  /** Jiffies on every CPU: busy (everything but idle and iowait; steal counts, it was not ours) and total. */
  busy: number;
  total: number;
}

/** The aggregate "cpu" line of /proc/stat; null when the text has none. */
export function parseProcStat(text: string): MachineCpuReading | null {
  const line = text.split('\n').find((l) => /^cpu\s/.test(l));
  if (!line) return null;
  const f = line.trim().split(/\s+/).slice(1, 9).map(Number);
  if (f.length < 4 || f.some((x) => !Number.isFinite(x))) return null;
  // user nice system idle iowait irq softirq steal; guest time is already inside user and nice.
  const total = f.reduce((a, b) => a + b, 0);
  const idle = f[3]! + (f[4] ?? 0);
  return { busy: total - idle, total };
}

export function readMachineCpu(procStat = '/proc/stat'): MachineCpuReading | null {
  try {
    return parseProcStat(readFileSync(procStat, 'utf8'));
  } catch {
    return null;
  }
}

/** Busy cores between two readings (0..CPUs); null when either is missing or no time passed. */
export function busyCores(a: MachineCpuReading | null, b: MachineCpuReading | null, cores = cpus().length): number | null {
  if (!a || !b || b.total <= a.total) return null;
  return ((b.busy - a.busy) / (b.total - a.total)) * cores;
}

/** The 1-minute load average (runnable and uninterruptible tasks). */
export function loadAverage1m(): number {
  return loadavg()[0] ?? 0;
}
