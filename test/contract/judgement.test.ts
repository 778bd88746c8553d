// What a verdict judged: rules counted by outcome, the unjudged ones named with why.
import { describe, expect, it } from 'vitest';
import { judgementOf, judgementSentence, type ExpectationResult, type VariantResult } from '../../src/contract/index.js';

const rule = (name: string, verdict: ExpectationResult['verdict'], message: string): ExpectationResult => ({
  name,
  expected: null,
  actual: null,
  verdict,
  basis: 'measured',
  message,
});
const variant = (name: string, expectations: ExpectationResult[]) => ({ name, expectations }) as unknown as VariantResult;

describe('judgementOf', () => {
  it('counts decided rules, undecided ones apart, and names every rule not judged with its reason', () => {
    const j = judgementOf(
      [
        variant('pre', [
          rule('oomKilled', 'passed', 'not OOM-killed, expected none'),
          rule('maxPeakRatio', 'inconclusive', 'not judged (storm too weak to judge: offered 3.0/s): peak 0.50× disabled'),
          rule('maxPeakMemory', 'inconclusive', 'peak ≥ 128.0 MiB (OOM-killed): cannot tell'),
        ]),
        variant('post', [rule('minPeakMemory', 'failed', 'peak 90 MiB < 100 MiB'), rule('oomKilled', 'inconclusive', 'not judged: machine too slow')]),
      ],
      ['off.oomKilled (variant not run)'],
    );
    expect(j).toEqual({
      judged: 2,
      passed: 1,
      failed: 1,
      undecided: 1,
      dropped: ['off.oomKilled (variant not run)', 'pre.maxPeakRatio (storm too weak to judge: offered 3.0/s)', 'post.oomKilled (machine too slow)'],
    });
    expect(judgementSentence(j)).toBe(
      'Judged 2 rules (1 passed, 1 failed); 1 undecided (only a bound, or nothing, measured); 3 not judged: off: oomKilled (variant not run); pre: maxPeakRatio (storm too weak to judge: offered 3.0/s); post: oomKilled (machine too slow).',
    );
  });

  it('groups the rules a variant lost for one reason', () => {
    const j = judgementOf([], ['pre.oomKilled (variant not run)', 'pre.minOkRps (variant not run)', 'post.minPeakRatio (compares with pre, not run)']);
    expect(judgementSentence(j)).toBe(
      'No expectation was judged; 3 not judged: pre: oomKilled, minOkRps (variant not run); post: minPeakRatio (compares with pre, not run).',
    );
  });

  it('says so when nothing was judged', () => {
    const j = judgementOf([variant('off', [])], []);
    expect(j).toEqual({ judged: 0, passed: 0, failed: 0, undecided: 0, dropped: [] });
    expect(judgementSentence(j)).toBe('No expectation was judged.');
  });
});
