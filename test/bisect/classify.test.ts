// A step's mark from the variant's verdict: passed good, failed bad, inconclusive or not judged skip.
import { describe, expect, it } from 'vitest';
import { judgeStep } from '../../src/bisect/index.js';
import type { ExpectationResult, RunResults, VariantResult } from '../../src/contract/index.js';

const rule = (verdict: ExpectationResult['verdict'], message: string): ExpectationResult => ({
  name: 'oomKilled',
  expected: false,
  actual: null,
  verdict,
  basis: 'measured',
  message,
});

function variant(over: Partial<VariantResult>): VariantResult {
  return {
    name: 'v1-15-3',
    runDirs: ['v1-15-3.r1', 'v1-15-3.r2'],
    memoryLimitBytes: 512 * 2 ** 20,
    peakMemoryBytes: 300 * 2 ** 20,
    memoryMeasure: 'working-set',
    oomKills: 0,
    okRps: 210.5,
    kubeletRequestsPerSecond: 0.22,
    expectations: [],
    verdict: 'passed',
    ...over,
  } as VariantResult;
}

const run = (v: VariantResult | null, over: Partial<RunResults> = {}) => ({ status: 'complete', variants: v ? [v] : [], ...over }) as RunResults;

describe('judgeStep', () => {
  it('passed is good, with the figures the reports show', () => {
    const j = judgeStep(run(variant({ expectations: [rule('passed', 'not OOM-killed, expected none')] })), 'v1-15-3');
    expect(j).toMatchObject({ mark: 'good', verdict: 'passed', reason: 'oomKilled: not OOM-killed, expected none' });
    expect(j.figures).toEqual({
      peakMemoryBytes: 300 * 2 ** 20,
      memoryLimitBytes: 512 * 2 ** 20,
      memoryMeasure: 'working-set',
      oomKills: 0,
      okRps: 210.5,
      kubeletRequestsPerSecond: 0.22,
      repetitions: 2,
    });
  });

  it('failed is bad, in the failed rules’ words', () => {
    const v = variant({ verdict: 'failed', oomKills: 1, expectations: [rule('passed', 'x'), rule('failed', 'OOM-killed 1 time(s) (in load), expected none')] });
    expect(judgeStep(run(v), 'v1-15-3')).toMatchObject({ mark: 'bad', reason: 'oomKilled: OOM-killed 1 time(s) (in load), expected none' });
  });

  it('inconclusive, an agent that could not run, a failed run and a variant that did not run are skips, saying why', () => {
    expect(judgeStep(run(variant({ verdict: 'inconclusive', expectations: [rule('inconclusive', 'storm too weak')] })), 'v1-15-3')).toMatchObject({
      mark: 'skip',
      reason: 'inconclusive: oomKilled: storm too weak',
    });
    expect(judgeStep(run(variant({ verdict: 'inconclusive', notJudged: 'the pods did not start in time' })), 'v1-15-3').reason).toBe(
      'inconclusive: the pods did not start in time',
    );
    expect(judgeStep(run(variant({ verdict: 'failed', error: 'spire-agent exited 2 at start' })), 'v1-15-3')).toMatchObject({
      mark: 'skip',
      reason: 'not judged: the variant could not be run: spire-agent exited 2 at start',
    });
    expect(judgeStep(run(variant({ verdict: 'failed' }), { status: 'failed', statusDetail: 'the node went away' }), 'v1-15-3').reason).toBe(
      'not judged: the run failed: the node went away',
    );
    expect(judgeStep(run(null, { skippedVariants: [{ name: 'v1-15-3', reason: '$X is not set' }] }), 'v1-15-3')).toMatchObject({
      mark: 'skip',
      reason: 'not judged: $X is not set',
      figures: null,
    });
  });
});
