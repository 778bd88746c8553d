// The kubelet's CrashLoopBackOff, in small: a replacement for a main process that died within
// CRASH_AGE_MS of its start waits 0.5 s, 1 s, 2 s ... up to 10 s, counted per pod slot.
const CRASH_AGE_MS = 2000;
const CRASH_BACKOFF_MS = 500;
const CRASH_BACKOFF_MAX_MS = 10_000;

export class CrashBackoff {
  /** Consecutive young deaths per pod slot. */
  readonly #crashes = new Map<number, number>();
  /** The pending waits, each with the resolve that ends it early. */
  readonly #waits = new Map<NodeJS.Timeout, () => void>();

  /** Counts the slot's main process ending (a crash when it was young) and returns the wait before its replacement. */
  delayAfterExit(index: number, startedAt: number): number {
    const young = Date.now() - startedAt < CRASH_AGE_MS;
    const crashes = young ? (this.#crashes.get(index) ?? 0) + 1 : 0;
    this.#crashes.set(index, crashes);
    return crashes === 0 ? 0 : Math.min(CRASH_BACKOFF_MAX_MS, CRASH_BACKOFF_MS * 2 ** (crashes - 1));
  }

  /** Resolves after delayMs, or at once when reset() runs first. */
  wait(delayMs: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        this.#waits.delete(t);
        resolve();
      }, delayMs);
      this.#waits.set(t, resolve);
    });
  }

  /** Ends every pending wait now and forgets the counts. */
  reset(): void {
    for (const [t, resolve] of this.#waits) {
      clearTimeout(t);
      resolve();
    }
    this.#waits.clear();
    this.#crashes.clear();
  }
}
