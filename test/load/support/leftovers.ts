// Processes the load generator may have left behind: pod processes and workers whose config names a
// socket under one of the given directories (others on the machine may run the generator too).
import { readdirSync, readFileSync } from 'node:fs';

export function loadProcessesAlive(markers: readonly string[]): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (/load-worker-(pod|worker)-main/.test(cmd) && markers.some((m) => cmd.includes(m))) out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Waits up to `ms` for every generator process to be gone; returns those still alive. */
export async function waitNoLoadProcesses(markers: readonly string[], ms = 5000): Promise<number[]> {
  if (markers.length === 0) return [];
  const until = Date.now() + ms;
  for (;;) {
    const alive = loadProcessesAlive(markers);
    if (alive.length === 0 || Date.now() > until) return alive;
    await new Promise((r) => setTimeout(r, 100));
  }
}
