// Whether the runner that writes a run folder is still alive: a folder that says `running` while
// its runner is gone (killed, machine rebooted) is `incomplete`. PID reuse is guarded by the
// process's start time, as the agent guards its callers.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { RunResults } from './results.js';

/** Field 22 of /proc/<pid>/stat (start time in clock ticks since boot); null when the process is gone. */
export function processStartTicks(pid: number): number | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text
      .slice(text.lastIndexOf(')') + 2)
      .trim()
      .split(/\s+/);
    const ticks = Number(fields[19]);
    return Number.isFinite(ticks) ? ticks : null;
  } catch {
    return null;
  }
}

/** The runner record for this process. */
export function currentRunner(): RunResults['runner'] {
  return { pid: process.pid, hostname: hostname(), startTicks: processStartTicks(process.pid) };
}

/**
 * For a folder that says `running`: 'alive' when its runner still runs here, 'gone' when it does
 * not, 'unknown' when it was written on another machine.
 */
export function runnerState(results: Pick<RunResults, 'runner' | 'status'>): 'alive' | 'gone' | 'unknown' {
  const r = results.runner;
  if (!r) return 'gone';
  if (r.hostname !== hostname()) return 'unknown';
  const ticks = processStartTicks(r.pid);
  if (ticks === null) return 'gone';
  return r.startTicks === null || ticks === r.startTicks ? 'alive' : 'gone';
}
