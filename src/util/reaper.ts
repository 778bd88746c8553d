// The process-wide owner of everything attestorm starts: cleanups registered here run once on
// normal exit paths, on SIGINT/SIGTERM/SIGHUP and on an uncaught error, newest first.

type Cleanup = () => void | Promise<void>;

const cleanups = new Set<Cleanup>();
let installed = false;
let running: Promise<void> | null = null;

/** Registers a cleanup; returns a function that unregisters it (call it once you cleaned up yourself). */
export function onCleanup(fn: Cleanup): () => void {
  install();
  cleanups.add(fn);
  return () => cleanups.delete(fn);
}

/** Runs every registered cleanup (newest first), each at most once. Safe to call repeatedly. */
export function runCleanups(): Promise<void> {
  running ??= (async () => {
    const list = [...cleanups].reverse();
    cleanups.clear();
    for (const fn of list) {
      try {
        await fn();
      } catch (err) {
        process.stderr.write(`attestorm: cleanup failed: ${(err as Error).message}\n`);
      }
    }
  })().finally(() => {
    running = null;
  });
  return running;
}

/** Signal handlers call this: listeners may note the interruption (e.g. mark results interrupted). */
const interruptListeners = new Set<(signal: NodeJS.Signals) => void>();
export function onInterrupt(fn: (signal: NodeJS.Signals) => void): () => void {
  install();
  interruptListeners.add(fn);
  return () => interruptListeners.delete(fn);
}

function install(): void {
  if (installed) return;
  installed = true;
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      for (const fn of interruptListeners) fn(signal);
      // A second signal while cleaning up means "now": exit at once.
      if (running) process.exit(130);
      void runCleanups().then(() => process.exit(signal === 'SIGINT' ? 130 : 143));
    });
  }
  process.on('uncaughtException', (err) => {
    process.stderr.write(`attestorm: uncaught error: ${err.stack ?? err.message}\n`);
    void runCleanups().then(() => process.exit(3));
  });
}
