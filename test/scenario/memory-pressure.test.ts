// Memory pressure short of a kill: the time near the limit and its longest stretch from the memory
// readings over the storm, the limit's hits and PSI stalls as deltas, the "at its limit" rule, and
// the expectations built on them.
import { describe, expect, it } from 'vitest';
import type { MemoryPressureRecord, MemorySample, VariantResult } from '../../src/contract/index.js';
import { evaluateExpectations } from '../../src/scenario/index.js';
import { atLimitWords, heldAtLimit, memoryPressure, pressureWords } from '../../src/scenario/memory-pressure.js';

const MiB = 2 ** 20;
/** A reading every 100 ms: working set `ws` MiB of a 100 MiB limit. */
const reading = (t: number, ws: number, extra: Partial<MemorySample> = {}): MemorySample => ({
  kind: 'memory',
  t,
  usageBytes: (ws + 5) * MiB,
  workingSetBytes: ws * MiB,
  rssBytes: ws * MiB,
  peakBytes: 100 * MiB,
  limitBytes: 100 * MiB,
  cpuSeconds: null,
  ...extra,
});

describe('memoryPressure', () => {
  it('counts the readings at >= 95% of the limit over the storm, the longest stretch, and the deltas of hits and stalls', () => {
    const samples: MemorySample[] = [reading(-500, 99, { limitHits: 5 })];
    // 0–10 s: 2 s near (2.0–4.0), 1 s clear, 3 s near (5.0–8.0), clear to the end.
    for (let t = 0; t < 10_000; t += 100) {
      const near = (t >= 2000 && t < 4000) || (t >= 5000 && t < 8000);
      samples.push(reading(t, near ? 96 : 60, { limitHits: 10 + Math.floor(t / 1000), stallSomeUs: t * 500, stallFullUs: t * 100 }));
    }
    const p = memoryPressure(samples, 0, 10_000, 1)!;
    expect(p).toEqual({
      rep: 1,
      stormSeconds: 10,
      nearLimitSeconds: 5,
      longestNearLimitSeconds: 3,
      // From the storm's first reading (10) to its last (19): the reading before the storm does not count.
      limitHits: 9,
      stallSome: 0.5,
      stallFull: 0.1,
    });
    expect(heldAtLimit(p)).toBe(true);
    expect(pressureWords(p)).toBe('5.0 s of 10 s at >= 95% (longest 3.0 s), 9 limit hits, stalled 50% (all tasks 10%)');
  });

  it('on cgroup v1 (no PSI, failcnt only) and without readings', () => {
    const v1 = [reading(0, 50, { limitHits: 0 }), reading(1000, 50, { limitHits: 0 })];
    expect(memoryPressure(v1, 0, 2000, 2)).toEqual({
      rep: 2,
      stormSeconds: 2,
      nearLimitSeconds: 0,
      longestNearLimitSeconds: 0,
      limitHits: 0,
      stallSome: null,
      stallFull: null,
    });
    expect(memoryPressure([], 0, 2000, 1)).toBeNull();
    // An unlimited cgroup has nothing to be near.
    expect(memoryPressure([reading(0, 50, { limitBytes: 0 })], 0, 2000, 1)).toBeNull();
  });

  it('at its limit: >= 20% of the storm near it, or PSI full >= 10%; never for a variant OOM-killed', () => {
    const p = (near: number, stallFull: number | null = null): MemoryPressureRecord => ({
      rep: 1,
      stormSeconds: 100,
      nearLimitSeconds: near,
      longestNearLimitSeconds: near,
      limitHits: 3,
      stallSome: stallFull,
      stallFull,
    });
    expect(heldAtLimit(p(19.9))).toBe(false);
    expect(heldAtLimit(p(20))).toBe(true);
    expect(heldAtLimit(p(0, 0.1))).toBe(true);
    expect(atLimitWords({ oomKills: 0, memoryPressure: [p(50)], runDirs: ['a.r1'] })).toBe('50.0 s of 100 s at >= 95% (longest 50.0 s), 3 limit hits');
    expect(atLimitWords({ oomKills: 1, memoryPressure: [p(50)], runDirs: ['a.r1'] })).toBeUndefined();
    expect(atLimitWords({ oomKills: 0, memoryPressure: [p(5), { ...p(70), rep: 2 }], runDirs: ['a.r1', 'a.r2'] })).toBe(
      'in 1 of 2 repetitions; r2: 70.0 s of 100 s at >= 95% (longest 70.0 s), 3 limit hits',
    );
  });
});

describe('maxTimeNearLimit and maxMemoryStall', () => {
  const v = (pressure: MemoryPressureRecord[] | undefined) =>
    ({
      name: 'pre',
      oomKills: 0,
      restarts: 0,
      okRps: 1,
      rejectedRps: 0,
      errorRps: 0,
      deadlineExceededRps: 0,
      memoryPressure: pressure,
      runDirs: ['pre.r1'],
      deaths: [],
      expectations: [],
    }) as unknown as VariantResult;
  const rec = (near: number, stallSome: number | null): MemoryPressureRecord => ({
    rep: 1,
    stormSeconds: 100,
    nearLimitSeconds: near,
    longestNearLimitSeconds: near,
    limitHits: 1,
    stallSome,
    stallFull: 0,
  });

  it('judge the worst repetition against the share', () => {
    const [time, stall] = evaluateExpectations(v([rec(30, 0.04)]), { maxTimeNearLimit: 0.2, maxMemoryStall: 0.05 }, []);
    expect(time).toMatchObject({
      name: 'maxTimeNearLimit',
      verdict: 'failed',
      actual: 0.3,
      message: '30% of the storm at >= 95% of the limit (30.0 s of 100 s) > 20%',
    });
    expect(stall).toMatchObject({ name: 'maxMemoryStall', verdict: 'passed', actual: 0.04, message: 'tasks stalled on memory 4.0% of the storm <= 5.0%' });
  });

  it('without PSI (cgroup v1) a stall rule is undecided, saying why; without readings both are', () => {
    const [, stall] = evaluateExpectations(v([rec(0, null)]), { maxTimeNearLimit: 0.2, maxMemoryStall: 0.05 }, []);
    expect(stall).toMatchObject({ verdict: 'inconclusive', message: expect.stringContaining('PSI (memory.pressure) needs cgroup v2') });
    const none = evaluateExpectations(v(undefined), { maxTimeNearLimit: 0.2 }, []);
    expect(none[0]).toMatchObject({ verdict: 'inconclusive', message: expect.stringContaining('unmeasured') });
  });
});
