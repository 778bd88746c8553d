// The backlog precondition: a limiting agent that took longer to reject a call than an admitted call
// could queue was held back by the machine's CPU, so what it did with admitted calls is not judged —
// but whether it survived and served its bystanders still is.
import { describe, expect, it } from 'vitest';
import type { LatencySummary, VariantResult } from '../../src/contract/index.js';
import { ConfigError } from '../../src/errors.js';
import { applyExpectations, evaluateExpectations, parseScenario } from '../../src/scenario/index.js';
import { variantResult } from '../support/variant-result.js';

const MiB = 2 ** 20;
const rejections = (p50Ms: number, count = 1200): LatencySummary => ({ count, p50Ms, p90Ms: 2 * p50Ms, p99Ms: 3 * p50Ms, p999Ms: 3 * p50Ms, maxMs: 4 * p50Ms });

const variant = (name: string, over: Partial<VariantResult> = {}): VariantResult =>
  variantResult({
    name,
    agent: { kind: 'reference', placement: 'pre-attestation', key: null },
    peakMemoryBytes: 78 * MiB,
    okRps: 0.3,
    rejectedRps: 64.5,
    deadlineExceededRps: 29.4,
    latency: { rateLimited: rejections(492) },
    peakInflightAttestations: 17,
    storm: {
      offeredWorkers: 96,
      startedWorkers: 96,
      offeredRps: 94.2,
      deliveredRps: 64.8,
      generatorCpuShare: 0.27,
      agentCpuCores: 0.86,
      machineBusyCores: 1.52,
    },
    ...over,
  });

const verdicts = (r: ReturnType<typeof evaluateExpectations>) => r.map((e) => [e.name, e.verdict]);

describe('maxRejectionLatency', () => {
  it('judges the admitted calls of an agent that rejected its storm within the limit', () => {
    const kept = variant('pre', { latency: { rateLimited: rejections(238, 5940) }, okRps: 0.3 });
    const r = evaluateExpectations(kept, { maxRejectionLatency: 400, minAdmittedSuccess: 0.15 }, [kept]);
    expect(verdicts(r)).toEqual([
      ['maxRejectionLatency', 'passed'],
      ['minAdmittedSuccess', 'failed'],
    ]);
    expect(r[0]!.message).toBe('the agent answered the calls it rejected in 238 ms (median of 5940) <= the 400 ms an admitted call can queue');
  });

  it('leaves the rules about admitted calls unjudged, naming the backlog, when rejections took longer', () => {
    const behind = variant('pre');
    const r = evaluateExpectations(behind, { maxRejectionLatency: 400, minAdmittedSuccess: 0.15, minOkRps: 7, maxErrorRps: 5 }, [behind]);
    expect(r[0]).toMatchObject({ name: 'maxRejectionLatency', verdict: 'inconclusive', basis: 'measured', actual: 492 });
    expect(r[0]!.message).toMatch(
      /^agent fell behind its storm: it took 492 ms \(median of 1200\) to answer the calls it rejected, more than the 400 ms an admitted call can queue .*agent 0\.86 cores/,
    );
    expect(verdicts(r.slice(1))).toEqual([
      ['minOkRps', 'inconclusive'],
      ['minAdmittedSuccess', 'inconclusive'],
      ['maxErrorRps', 'inconclusive'],
    ]);
    expect(r.find((e) => e.name === 'minAdmittedSuccess')!.message).toMatch(
      /^not judged \(agent fell behind its storm\): 1% of the admitted storm calls succeeded/,
    );
  });

  it('still fails a limiter that stopped protecting the agent: survival and bystanders are judged behind any backlog', () => {
    const killed = variant('pre', { oomKills: 1, peakMemoryBytes: 128 * MiB, latency: { rateLimited: rejections(4200) }, bystanders: undefined });
    const r = evaluateExpectations(killed, { maxRejectionLatency: 400, oomKilled: false, maxPeakMemory: '100Mi', minAdmittedSuccess: 0.15 }, [killed]);
    expect(verdicts(r)).toEqual([
      ['maxRejectionLatency', 'inconclusive'],
      ['oomKilled', 'failed'],
      ['maxPeakMemory', 'failed'],
      ['minAdmittedSuccess', 'inconclusive'],
    ]);
  });

  it('is inconclusive without a rejection to time', () => {
    const open = variant('pre', { latency: {}, rejectedRps: 0 });
    expect(evaluateExpectations(open, { maxRejectionLatency: 400 }, [open])[0]).toMatchObject({
      verdict: 'inconclusive',
      basis: 'none',
      actual: null,
      message: expect.stringMatching(/^agent fell behind its storm: no storm call was rejected, so how long calls queued in the agent is unknown/),
    });
  });

  it('leaves a ratio to a variant whose agent fell behind unjudged, and judges it when that agent kept up', () => {
    const post = (pre: VariantResult) => {
      const collapsed = variant('post', { agent: { kind: 'reference', placement: 'post-attestation', key: null }, peakMemoryBytes: 85 * MiB, latency: {} });
      applyExpectations([pre, collapsed], { pre: { maxRejectionLatency: 400 }, post: { minPeakRatio: { to: 'pre', value: 1.3 } } });
      return collapsed.expectations[0]!;
    };
    expect(post(variant('pre'))).toMatchObject({
      verdict: 'inconclusive',
      message: expect.stringMatching(/^not judged \(pre's agent fell behind its storm\): peak working set 1\.09× pre/),
    });
    expect(post(variant('pre', { latency: { rateLimited: rejections(250) } }))).toMatchObject({ verdict: 'failed' });
  });

  it('takes a duration and refuses anything else by name', () => {
    const expectOf = (value: unknown) => ({ name: 'x', expect: { 'pre-attestation': { maxRejectionLatency: value } } });
    expect(parseScenario(expectOf('400ms')).scenario.expect['pre-attestation']).toEqual({ maxRejectionLatency: 400 });
    let problems: string[] = [];
    try {
      parseScenario(expectOf('soon'));
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      problems = (err as ConfigError).problems;
    }
    expect(problems.join('\n')).toMatch(/expect\.pre-attestation\.maxRejectionLatency/);
  });
});
