import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { sleep } from '../../src/util/index.js';

describe('sleep', () => {
  it('waits the time it is given', async () => {
    const t0 = performance.now();
    await sleep(30);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(25);
  });

  it('resolves as soon as its signal aborts', async () => {
    const ac = new AbortController();
    const t0 = performance.now();
    const waiting = sleep(10_000, ac.signal);
    setTimeout(() => ac.abort(), 10);
    await expect(waiting).resolves.toBeUndefined();
    expect(performance.now() - t0).toBeLessThan(5_000);
  });

  it('resolves at once on a signal already aborted', async () => {
    const ac = new AbortController();
    ac.abort();
    const t0 = performance.now();
    await expect(sleep(10_000, ac.signal)).resolves.toBeUndefined();
    expect(performance.now() - t0).toBeLessThan(5_000);
  });

  it('leaves no abort listener behind once its timer fires', async () => {
    const ac = new AbortController();
    for (let i = 0; i < 5; i++) await sleep(1, ac.signal);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });
});
