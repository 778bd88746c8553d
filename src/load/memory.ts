// Real memory of worker processes: PSS from /proc/<pid>/smaps_rollup, which charges shared pages
// (the node binary, shared libraries) by the share, unlike VmRSS which charges them in full.
import { readFile } from 'node:fs/promises';

/** PSS in bytes, or null when the process is gone or the file is unreadable. */
export async function readPssBytes(pid: number): Promise<number | null> {
  try {
    const text = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8');
    const m = /^Pss:\s+(\d+) kB/m.exec(text);
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

export interface MemoryStats {
  median: number;
  max: number;
  samples: number;
}

/** Median and max PSS over the given processes (those still alive); null when none could be read. */
export async function samplePss(pids: readonly number[]): Promise<MemoryStats | null> {
  const values = (await Promise.all(pids.map(readPssBytes))).filter((v): v is number => v !== null).sort((a, b) => a - b);
  if (values.length === 0) return null;
  const mid = values.length >> 1;
  const median = values.length % 2 ? values[mid]! : (values[mid - 1]! + values[mid]!) / 2;
  return { median, max: values[values.length - 1]!, samples: values.length };
}

/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat; null when gone. */
export async function readCpuSeconds(pid: number): Promise<number | null> {
  try {
    const text = await readFile(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses: fields restart after the last ')'.
    // utime and stime are in clock ticks; USER_HZ is 100 on every Linux this runs on.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}
