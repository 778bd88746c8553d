// Waiting for a condition in a cluster: polled, bounded, cut short by an abort or a failure the
// watch reported, and timing out with a message that names what did not happen.
import { TimeoutError } from '../../errors.js';
import { sleep } from '../../util/index.js';

export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  opts: { timeoutMs: number; pollMs?: number; signal?: AbortSignal; failure?: () => Error | null },
): Promise<boolean> {
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    const failed = opts.failure?.();
    if (failed) throw failed;
    if (opts.signal?.aborted) return false;
    if (await check()) return true;
    if (Date.now() >= deadline) throw new TimeoutError(`${what} within ${Math.round(opts.timeoutMs / 1000)} s`);
    await sleep(opts.pollMs ?? 250, opts.signal);
  }
}
