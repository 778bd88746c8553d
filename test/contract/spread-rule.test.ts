// The spread rule: ranges that do not overlap are a difference only when that many runs of one
// behaviour would rarely fall apart so (2·m!·n!/(m+n)!); otherwise "not distinguishable".
import { describe, expect, it } from 'vitest';
import { compareRanges, separationChance } from '../../src/contract/index.js';
import { oomKillDistribution } from '../../src/report/repetitions.js';

describe('the spread rule', () => {
  it('gives the chance that runs of one behaviour fall apart', () => {
    expect(separationChance(1, 1)).toBe(1);
    expect(separationChance(2, 2)).toBeCloseTo(1 / 3, 6);
    expect(separationChance(3, 3)).toBeCloseTo(0.1, 6);
    expect(separationChance(5, 5)).toBeCloseTo(2 / 252, 6);
  });

  it('calls a difference only outside the spread and with enough runs', () => {
    expect(compareRanges({ min: 100, max: 110 }, 3, { min: 200, max: 230 }, 3).verdict).toBe('higher');
    expect(compareRanges({ min: 100, max: 110 }, 3, { min: 50, max: 60 }, 5).verdict).toBe('lower');
    const overlap = compareRanges({ min: 100, max: 150 }, 5, { min: 140, max: 200 }, 5);
    expect(overlap).toMatchObject({ verdict: 'indistinguishable', overlap: true });
    const few = compareRanges({ min: 100, max: 100 }, 1, { min: 300, max: 300 }, 1);
    expect(few.verdict).toBe('indistinguishable');
    expect(few.text).toBe('not distinguishable with 1 and 1 runs (ranges apart, but 100% by chance)');
  });

  it('tells the time to the first OOM kill as a distribution counting survivors', () => {
    const rep = (firstOomKillMs: number | null) => ({
      rep: 1,
      runDir: 'v.r1',
      peakMemoryBytes: 1,
      okRps: 1,
      rejectedRps: 0,
      errorRps: 0,
      deadlineExceededRps: 0,
      oomKills: firstOomKillMs === null ? 0 : 1,
      firstOomKillMs,
      restarts: 0,
      loadSeconds: 300,
      kubeletRequestsPerSecond: null,
    });
    expect(oomKillDistribution([rep(12_000), rep(null), rep(8_000), rep(40_000), rep(null)])).toBe('killed in 3 of 5: 8.0 s, 12 s, 40 s; 2 survived');
    expect(oomKillDistribution([rep(null), rep(null), rep(null)])).toBe('survived in all 3');
    expect(oomKillDistribution([rep(8_000)])).toBe('killed in the only run, at 8.0 s');
  });
});
