// How a running agent process stops, the same for both ways of starting one (`attestorm agent` and
// the bundled entry the runner starts): SIGTERM, SIGINT, or the owner's IPC channel closing (the
// runner died) drains in-flight calls for at most STOP_GRACE_MS, then cuts what is left; a second
// signal cuts at once. The caller then exits 0.
import type { RunningAgent } from './agent.js';

/** Drain budget: inside the runner's SIGTERM-to-SIGKILL grace (3 s), so a drain ends on its own terms. */
export const STOP_GRACE_MS = 2500;

/** The one JSON line on stdout that tells a parent the agent is serving. */
export function readyLine(agent: RunningAgent): string {
  return `${JSON.stringify({ event: 'ready', pid: process.pid, socket: agent.socketPath, metrics: agent.metricsUrl ?? null })}\n`;
}

/** Resolves, with what stopped it, once the agent is closed (drained, or cut after the grace). */
export function untilStopped(agent: RunningAgent, log: (message: string) => void = () => {}): Promise<string> {
  return new Promise((resolve) => {
    let reason: string | null = null;
    const done = () => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      process.off('disconnect', onDisconnect);
      resolve(reason!);
    };
    const stop = (why: string) => {
      if (reason !== null) {
        // A second signal: stop waiting for in-flight calls.
        log(`${why} while draining, stopping now`);
        agent.destroy();
        done();
        return;
      }
      reason = why;
      log(`${why}, draining`);
      // close() cuts calls still running after its grace; this ceiling covers a close that hangs anyway.
      const ceiling = setTimeout(() => {
        agent.destroy();
        done();
      }, STOP_GRACE_MS + 500);
      ceiling.unref();
      agent.close().then(
        () => {
          clearTimeout(ceiling);
          done();
        },
        (err: unknown) => {
          log(`drain failed: ${(err as Error).message}`);
          clearTimeout(ceiling);
          agent.destroy();
          done();
        },
      );
    };
    const onSignal = (sig: NodeJS.Signals) => stop(sig);
    const onDisconnect = () => stop('owner gone (IPC channel closed)');
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    process.on('disconnect', onDisconnect);
  });
}
