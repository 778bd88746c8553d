// Rate-limit rejections per repetition. The load generator counts every rejected call itself (its
// per-call outcomes survive the agent's death); the agent's metrics add the key type, but only up to
// the last scrape before each death or stop. The totals are the generator's; the key types the
// scrapes', with what no scrape saw kept under UNATTRIBUTED instead of being lost.
import type { MetricsSample } from '../contract/index.js';

/** The key under which rejections counted by the generator but seen by no scrape are kept. */
export const UNATTRIBUTED = 'unattributed';

const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

/** Per-agent-lifetime maxima of the cumulative rejection counters, summed across restarts. */
export class RejectionTotals {
  #done: Record<string, number> = {};
  #current: Record<string, number> = {};
  observe(m: Pick<MetricsSample, 'rejectedByKeyType'>): void {
    // A counter that went down means a new agent process: bank the previous one's totals.
    if (sum(m.rejectedByKeyType) < sum(this.#current)) this.#bank();
    this.#current = { ...m.rejectedByKeyType };
  }
  #bank(): void {
    for (const [k, v] of Object.entries(this.#current)) this.#done[k] = (this.#done[k] ?? 0) + v;
    this.#current = {};
  }
  /** What the scrapes saw, by key type. */
  scraped(): Record<string, number> {
    this.#bank();
    return { ...this.#done };
  }
}

/**
 * The scrapes' key types completed to the generator's count: rejections the generator counted but
 * no scrape saw (the agent died or was stopped before the next scrape) are added as UNATTRIBUTED,
 * so the values sum to at least `counted`. Never less than what the scrapes saw.
 */
export function completeRejections(scraped: Record<string, number>, counted: number): Record<string, number> {
  const missing = counted - sum(scraped);
  return missing > 0 ? { ...scraped, [UNATTRIBUTED]: (scraped[UNATTRIBUTED] ?? 0) + missing } : { ...scraped };
}
