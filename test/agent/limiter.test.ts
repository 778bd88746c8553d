import { describe, expect, it, vi } from 'vitest';
import { coarseClock, createRateLimiter } from '../../src/agent/limiter.js';
import type { LimitMethodKey } from '../../src/agent/types.js';
import { ConfigError } from '../../src/errors.js';

function limits(over: Partial<Record<LimitMethodKey, number>>): Record<LimitMethodKey, number> {
  return { fetch_x509_svid: 0, fetch_jwt_svid: 0, fetch_x509_bundles: 0, fetch_jwt_bundles: 0, validate_jwt_svid: 0, ...over };
}

function clock(start = 1000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

function takeAll(allow: () => boolean, max = 1000): number {
  let n = 0;
  while (n < max && allow()) n++;
  return n;
}

describe('createRateLimiter', () => {
  it('a new key has a full bucket: burst = limit, then rejects', () => {
    const c = clock();
    const rl = createRateLimiter(limits({ fetch_jwt_svid: 10 }), { now: c.now });
    expect(takeAll(() => rl.allow('fetch_jwt_svid', 'a'))).toBe(10);
    expect(rl.allow('fetch_jwt_svid', 'a')).toBe(false);
  });

  it('refills at limit per second, never above the burst', () => {
    const c = clock();
    const rl = createRateLimiter(limits({ fetch_jwt_svid: 10 }), { now: c.now });
    takeAll(() => rl.allow('fetch_jwt_svid', 'a'));
    c.advance(99);
    expect(rl.allow('fetch_jwt_svid', 'a')).toBe(false); // 0.99 token
    c.advance(1);
    expect(rl.allow('fetch_jwt_svid', 'a')).toBe(true); // 1.0 token (0.99 kept from the failed try)
    expect(rl.allow('fetch_jwt_svid', 'a')).toBe(false);
    c.advance(350);
    expect(takeAll(() => rl.allow('fetch_jwt_svid', 'a'))).toBe(3);
    c.advance(60_000 - 1); // long idle within one GC interval: capped at the burst
    expect(takeAll(() => rl.allow('fetch_jwt_svid', 'a'))).toBe(10);
  });

  it('sustained rate: 1 call every 100 ms at limit 10 always passes, every 90 ms eventually fails', () => {
    const c = clock();
    const rl = createRateLimiter(limits({ fetch_jwt_svid: 10 }), { now: c.now });
    takeAll(() => rl.allow('fetch_jwt_svid', 'a'));
    for (let i = 0; i < 50; i++) {
      c.advance(100);
      expect(rl.allow('fetch_jwt_svid', 'a')).toBe(true);
    }
    let rejected = 0;
    for (let i = 0; i < 50; i++) {
      c.advance(90);
      if (!rl.allow('fetch_jwt_svid', 'a')) rejected++;
    }
    // 50 calls in 4.5 s earn 45 tokens: exactly 5 rejected.
    expect(rejected).toBe(5);
  });

  it('keys and methods have separate buckets', () => {
    const c = clock();
    const rl = createRateLimiter(limits({ fetch_jwt_svid: 2, fetch_x509_svid: 3 }), { now: c.now });
    expect(takeAll(() => rl.allow('fetch_jwt_svid', 'a'))).toBe(2);
    expect(takeAll(() => rl.allow('fetch_jwt_svid', 'b'))).toBe(2);
    expect(takeAll(() => rl.allow('fetch_x509_svid', 'a'))).toBe(3);
    expect(rl.size()).toBe(3);
  });

  it('limit 0 always allows and keeps no state', () => {
    const c = clock();
    const rl = createRateLimiter(limits({ fetch_jwt_svid: 1 }), { now: c.now });
    expect(takeAll(() => rl.allow('validate_jwt_svid', 'a'), 500)).toBe(500);
    expect(takeAll(() => rl.allow('fetch_jwt_bundles', 'a'), 500)).toBe(500);
    expect(rl.size()).toBe(0);
  });

  it('two-generation GC: keys idle for two intervals are dropped, active ones kept', () => {
    const c = clock();
    const gc = 60_000;
    const rl = createRateLimiter(limits({ fetch_jwt_svid: 5 }), { now: c.now, gcIntervalMs: gc });
    for (let i = 0; i < 100; i++) rl.allow('fetch_jwt_svid', `idle-${i}`);
    takeAll(() => rl.allow('fetch_jwt_svid', 'busy'));
    expect(rl.size()).toBe(101);

    c.advance(gc); // rotation 1: all move to previous, none dropped
    expect(rl.allow('fetch_jwt_svid', 'busy')).toBe(true); // promoted back to current
    expect(rl.size()).toBe(101);

    c.advance(gc); // rotation 2: previous (the idle keys) dropped
    rl.allow('fetch_jwt_svid', 'busy');
    expect(rl.size()).toBe(1);

    // A dropped key comes back with a full bucket.
    expect(takeAll(() => rl.allow('fetch_jwt_svid', 'idle-0'))).toBe(5);
  });

  it('a promoted key keeps its bucket state (no free refill from GC)', () => {
    const c = clock();
    const rl = createRateLimiter(limits({ fetch_jwt_svid: 5 }), { now: c.now, gcIntervalMs: 1000 });
    takeAll(() => rl.allow('fetch_jwt_svid', 'k'));
    c.advance(1000); // rotation; 1 s refills 5 tokens by rate, not by being recreated
    expect(takeAll(() => rl.allow('fetch_jwt_svid', 'k'))).toBe(5);
    c.advance(100); // same generation: 0.5 tokens
    expect(rl.allow('fetch_jwt_svid', 'k')).toBe(false);
  });

  it('a long silence drops both generations at once', () => {
    const c = clock();
    const rl = createRateLimiter(limits({ fetch_jwt_svid: 5 }), { now: c.now, gcIntervalMs: 1000 });
    for (let i = 0; i < 10; i++) rl.allow('fetch_jwt_svid', `k${i}`);
    c.advance(2500);
    rl.allow('fetch_jwt_svid', 'new');
    expect(rl.size()).toBe(1);
    // Rotation boundaries stay aligned: next at 3000 from start, not 2500 + 1000.
    c.advance(500);
    rl.allow('fetch_jwt_svid', 'other');
    expect(rl.size()).toBe(2); // 'new' demoted to previous, 'other' current
  });

  it('compaction after a storm keeps the state of the keys that stay live', () => {
    const c = clock(0);
    const rl = createRateLimiter(limits({ fetch_jwt_svid: 1 }), { now: c.now, gcIntervalMs: 50 });
    for (let i = 0; i < 1000; i++) rl.allow('fetch_jwt_svid', `storm-${i}`); // each drained to 0
    expect(rl.allow('fetch_jwt_svid', 'quiet')).toBe(true); // 'quiet' keeps a drained bucket too
    c.advance(50);
    // Only these stay active; 1 token needs 1000 ms, so every one of them is still empty.
    for (const k of ['quiet', 'storm-7', 'storm-999']) expect(rl.allow('fetch_jwt_svid', k)).toBe(false);
    c.advance(50); // demotes; 3 live of 1001 slots: the slab is compacted
    for (const k of ['quiet', 'storm-7', 'storm-999']) expect(rl.allow('fetch_jwt_svid', k)).toBe(false);
    expect(rl.size()).toBe(3);
    // Freed and compacted slots never leak old state into new keys: a new key has a full bucket.
    for (let i = 0; i < 100; i++) expect(rl.allow('fetch_jwt_svid', `new-${i}`)).toBe(true);
    c.advance(1000);
    expect(rl.allow('fetch_jwt_svid', 'quiet')).toBe(true); // refilled by time, as a live key should be
  });

  it('slots freed by GC are reused with fresh buckets', () => {
    const c = clock(0);
    const rl = createRateLimiter(limits({ fetch_jwt_svid: 2 }), { now: c.now, gcIntervalMs: 1000 });
    for (let i = 0; i < 200; i++) takeAll(() => rl.allow('fetch_jwt_svid', `old-${i}`));
    for (let i = 0; i < 150; i++) rl.allow('fetch_jwt_svid', `keep-${i}`);
    c.advance(1000);
    for (let i = 0; i < 150; i++) rl.allow('fetch_jwt_svid', `keep-${i}`);
    c.advance(1000); // old-* dropped (no compaction: 150 of 350 slots live), their slots freed
    for (let i = 0; i < 150; i++) rl.allow('fetch_jwt_svid', `keep-${i}`);
    expect(rl.size()).toBe(150);
    for (let i = 0; i < 200; i++) expect(takeAll(() => rl.allow('fetch_jwt_svid', `reuse-${i}`))).toBe(2);
    expect(rl.size()).toBe(350);
  });

  it('rejects invalid limits and GC intervals with ConfigError naming the key', () => {
    expect(() => createRateLimiter(limits({ fetch_jwt_svid: -1 }))).toThrow(ConfigError);
    expect(() => createRateLimiter(limits({ fetch_jwt_svid: 1.5 }))).toThrow(/rateLimit\.limits\.fetch_jwt_svid must be a non-negative integer/);
    expect(() => createRateLimiter(limits({}), { gcIntervalMs: 0 })).toThrow(/rateLimit\.gcInterval must be a positive duration/);
  });
  it('rejects a clock tick under 1 ms', () => {
    expect(() => createRateLimiter(limits({}), { clockTickMs: 0.5 })).toThrow(/rateLimit\.clockTick must be at least 1 ms/);
  });
});

describe('the default (coarse) clock', () => {
  it('reads the clock on every call while calls are few, and runs no timer', () => {
    const spy = vi.spyOn(performance, 'now');
    try {
      const clock = coarseClock(1000, 32);
      for (let i = 0; i < 31; i++) clock.now();
      expect(spy.mock.calls.length).toBe(31);
      expect(clock.ticking()).toBe(false);
    } finally {
      spy.mockRestore();
    }
  });

  it('while busy, reads between ticks cost no clock call, the reading moves on, and the timer stops when calls thin out', async () => {
    const spy = vi.spyOn(performance, 'now');
    try {
      const clock = coarseClock(2, 32);
      for (let i = 0; i < 32; i++) clock.now();
      expect(clock.ticking()).toBe(true);
      const first = clock.now();
      const calls = spy.mock.calls.length;
      for (let i = 0; i < 1000; i++) expect(clock.now()).toBe(first);
      expect(spy.mock.calls.length).toBe(calls); // served from the timer's reading
      // Busy enough to keep the timer (32 reads per wait), until the reading has moved on.
      await vi.waitFor(
        () => {
          for (let i = 0; i < 32; i++) clock.now();
          expect(clock.now()).toBeGreaterThan(first);
        },
        { timeout: 5000, interval: 1 },
      );
      // No reads: the next tick sees too few and stops the timer.
      await vi.waitFor(() => expect(clock.ticking()).toBe(false), { timeout: 5000, interval: 5 });
      expect(clock.now()).toBeGreaterThan(first);
    } finally {
      spy.mockRestore();
    }
  });

  it('a limiter on the default clock refills a drained bucket', async () => {
    const rl = createRateLimiter(limits({ fetch_jwt_svid: 5 }));
    expect(takeAll(() => rl.allow('fetch_jwt_svid', 'k'))).toBe(5);
    expect(rl.allow('fetch_jwt_svid', 'k')).toBe(false);
    await vi.waitFor(() => expect(rl.allow('fetch_jwt_svid', 'k')).toBe(true), { timeout: 5000, interval: 20 });
  });
});
