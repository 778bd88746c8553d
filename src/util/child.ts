// Stopping child processes the same way everywhere: SIGTERM, then SIGKILL after a grace period.
import type { ChildProcess } from 'node:child_process';

export function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** Resolves once the child has exited (immediately if it already has). */
export function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (!isRunning(child)) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/** SIGTERM, wait up to graceMs, then SIGKILL. Idempotent. */
export async function stopChild(child: ChildProcess, graceMs = 3000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (!isRunning(child)) return { code: child.exitCode, signal: child.signalCode };
  const done = exited(child);
  child.kill('SIGTERM');
  const timer = setTimeout(() => {
    if (isRunning(child)) child.kill('SIGKILL');
  }, graceMs);
  try {
    return await done;
  } finally {
    clearTimeout(timer);
  }
}
