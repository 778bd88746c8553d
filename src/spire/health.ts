// Readiness of a SPIRE server or agent: its health listener answers 200 on /ready. Waiting also
// watches the process, so a SPIRE that dies on a bad config fails fast with its own words.
import type { ChildProcess } from 'node:child_process';
import { ChildProcessError, TimeoutError } from '../errors.js';
import { isRunning } from '../util/index.js';
import { quoteLog } from './log-tail.js';

export async function isReady(healthPort: number): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${healthPort}/ready`, { signal: AbortSignal.timeout(1000) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

export interface WaitReadyOptions {
  what: string;
  child: ChildProcess;
  healthPort: number;
  timeoutMs: number;
  logFile: string;
  pollMs?: number;
  /** Checked on every poll: a reason to give up now (e.g. the server refused the join token). */
  failure?: () => string | null;
}

/** Resolves once /ready answers 200; throws (quoting the log) if the process exits or time runs out. */
export async function waitReady(o: WaitReadyOptions): Promise<number> {
  const started = Date.now();
  const deadline = started + o.timeoutMs;
  const pollMs = o.pollMs ?? 100;
  let exit: string | null = null;
  const onExit = (code: number | null, signal: NodeJS.Signals | null) => (exit = signal ?? `code ${code}`);
  o.child.once('exit', onExit);
  try {
    for (;;) {
      if (exit !== null || !isRunning(o.child)) {
        exit ??= o.child.signalCode ?? `code ${o.child.exitCode}`;
        throw new ChildProcessError(`${o.what} exited before it was ready (${exit}).${quoteLog(o.logFile)}`);
      }
      const failure = o.failure?.();
      if (failure) throw new ChildProcessError(`${o.what} cannot become ready: ${failure}.${quoteLog(o.logFile)}`);
      if (await isReady(o.healthPort)) return Date.now() - started;
      if (Date.now() >= deadline)
        throw new TimeoutError(`${o.what} was not ready within ${o.timeoutMs} ms (GET http://127.0.0.1:${o.healthPort}/ready).${quoteLog(o.logFile)}`);
      await new Promise((r) => setTimeout(r, pollMs));
    }
  } finally {
    o.child.off('exit', onExit);
  }
}
