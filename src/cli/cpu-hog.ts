// `stability --cpu-hog <nice>`: a neighbour that wants every core (one busy process per CPU at the
// given nice value) for the whole series, started before any CPU budget so it stays outside it.
import { spawn, type ChildProcess } from 'node:child_process';
import { cpus, setPriority } from 'node:os';
import { ConfigError } from '../errors.js';
import { onCleanup, stopChild } from '../util/index.js';

export const cpuHogOption = {
  type: 'number',
  describe:
    'Run the series beside a CPU hog: one busy process per CPU at this nice value (-20..19; 19 = a background build, 0 = a neighbour of equal priority). Default: none',
} as const;

export function checkCpuHogFlag(nice: number | undefined): number | undefined {
  if (nice === undefined) return undefined;
  if (!Number.isInteger(nice) || nice < -20 || nice > 19) throw new ConfigError(`--cpu-hog must be a nice value, an integer from -20 to 19, got ${nice}`);
  return nice;
}

/** Starts the hog processes; stopped by the returned function or on exit/SIGINT. */
export function startCpuHog(nice: number | undefined): () => Promise<void> {
  if (nice === undefined) return async () => {};
  const hogs: ChildProcess[] = cpus().map(() => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
  for (const h of hogs) if (h.pid !== undefined) setPriority(h.pid, nice);
  const stop = async () => {
    off();
    await Promise.all(hogs.map((h) => stopChild(h, 1000)));
  };
  const off = onCleanup(stop);
  return stop;
}
