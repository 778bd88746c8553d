import { describe, expect, it } from 'vitest';
import {
  aggregateVariant,
  applyExpectations,
  comparisonTable,
  evaluateExpectations,
  loadClientRecord,
  median,
  type RepMeasurement,
  type VariantResult,
} from '../../src/scenario/index.js';
import { NO_PEAKS, type MemoryPeaks } from '../../src/contract/index.js';
import { judgeExit, RestartBackoff } from '../../src/targets/index.js';
import { variantResult } from '../support/variant-result.js';

const MiB = 2 ** 20;
/** A repetition's peaks with every cgroup measure at b (RSS unread). */
const measured = (b: number): MemoryPeaks => ({ workingSetBytes: b, usageBytes: b, rssBytes: null });

function variant(name: string, over: Partial<VariantResult> = {}): VariantResult {
  const placement = (['pre-attestation', 'post-attestation', 'disabled'].includes(name) ? name : 'disabled') as VariantResult['agent']['placement'];
  return variantResult({ name, agent: { kind: 'reference', placement, key: null }, ...over });
}
const killed = (name: string, over: Partial<VariantResult> = {}) =>
  variant(name, {
    peakMemoryBytes: 128 * MiB,
    oomKills: 1,
    deaths: [{ rep: 1, atMs: 5000, phase: 'load', cause: 'oom-kill', detail: 'kernel OOM kill', counted: true }],
    ...over,
  });

describe('expectations', () => {
  it('checks absolute rules and quotes values as written', () => {
    const p = variant('pre-attestation', { peakMemoryBytes: 60 * MiB, okRps: 4, errorRps: 1, deadlineExceededRps: 2, restarts: 1 });
    const r = evaluateExpectations(p, { oomKilled: false, maxPeakMemory: '64Mi', minPeakMemory: '61Mi', minOkRps: 5, maxErrorRps: 2, maxRestarts: 0 }, [p]);
    expect(r.map((e) => [e.name, e.verdict])).toEqual([
      ['oomKilled', 'passed'],
      ['maxPeakMemory', 'passed'],
      ['minPeakMemory', 'failed'],
      ['minOkRps', 'failed'],
      ['maxErrorRps', 'failed'],
      ['maxRestarts', 'failed'],
    ]);
    expect(r[1]).toMatchObject({ expected: '64Mi', actual: 60 * MiB, basis: 'measured', message: 'peak working set 60.0 MiB <= 64.0 MiB' });
    expect(r[4]!.message).toBe('failed calls (errors + deadline exceeded) 3.0/s > 2.0/s');
  });

  it('ratios between measured peaks pass or fail on the measurement', () => {
    const pre = variant('pre-attestation', { peakMemoryBytes: 40 * MiB });
    const dis = variant('disabled', { peakMemoryBytes: 100 * MiB });
    expect(evaluateExpectations(pre, { maxPeakRatio: { to: 'disabled', value: 0.6 } }, [pre, dis])[0]).toMatchObject({
      verdict: 'passed',
      basis: 'measured',
      actual: 0.4,
    });
    expect(evaluateExpectations(pre, { minPeakRatio: { to: 'disabled', value: 0.8 } }, [pre, dis])[0]).toMatchObject({
      verdict: 'failed',
      message: 'peak working set 0.40× disabled (40.0 MiB / 100.0 MiB) < 0.8×',
    });
  });

  // An OOM-killed agent's recorded peak (the kernel's mark at its limit) bounds its demand from below.
  it('a bound that decides the rule passes or fails it', () => {
    const pre = variant('pre-attestation', { peakMemoryBytes: 70 * MiB });
    const dis = killed('disabled');
    // pre ≤ 0.6 × disabled's true peak is proven by pre ≤ 0.6 × its limit.
    expect(evaluateExpectations(pre, { maxPeakRatio: { to: 'disabled', value: 0.6 } }, [pre, dis])[0]).toMatchObject({ verdict: 'passed', basis: 'bound' });
    // post OOM-killed at 128 MiB is at least 1.2 × a measured 100 MiB.
    const post = killed('post-attestation');
    const dis2 = variant('disabled', { peakMemoryBytes: 100 * MiB });
    expect(evaluateExpectations(post, { minPeakRatio: { to: 'disabled', value: 1.2 } }, [post, dis2])[0]).toMatchObject({ verdict: 'passed', basis: 'bound' });
    // 90 MiB measured is already below 0.8 × disabled's limit: below its true peak too.
    const post2 = variant('post-attestation', { peakMemoryBytes: 90 * MiB });
    expect(evaluateExpectations(post2, { minPeakRatio: { to: 'disabled', value: 0.8 } }, [post2, dis])[0]).toMatchObject({ verdict: 'failed', basis: 'bound' });
  });

  it('a bound that cannot decide the rule is inconclusive, never a pass', () => {
    const post = killed('post-attestation');
    const dis = killed('disabled');
    // Both OOM-killed at the same limit: nothing is known of either true peak.
    const [r] = evaluateExpectations(post, { minPeakRatio: { to: 'disabled', value: 0.8 } }, [post, dis]);
    expect(r).toMatchObject({ verdict: 'inconclusive', basis: 'bound' });
    expect(r!.message).toMatch(/cannot tell/);
    // minPeakMemory does not count the limit as the peak of a survivor; an OOM-killed one below it is unknown.
    const small = killed('disabled', { peakMemoryBytes: 100 * MiB, memoryLimitBytes: 100 * MiB });
    expect(evaluateExpectations(small, { minPeakMemory: '144Mi' }, [small])[0]).toMatchObject({ verdict: 'inconclusive' });
    // maxPeakMemory of an OOM-killed agent under the rule's value: its true peak may exceed it.
    expect(evaluateExpectations(small, { maxPeakMemory: '110Mi' }, [small])[0]).toMatchObject({ verdict: 'inconclusive' });
  });

  it('a ratio against a variant that was not measured is inconclusive', () => {
    const pre = variant('pre-attestation', { peakMemoryBytes: 40 * MiB });
    expect(evaluateExpectations(pre, { maxPeakRatio: { to: 'disabled', value: 0.6 } }, [pre])[0]).toMatchObject({ verdict: 'inconclusive', basis: 'none' });
  });

  it('a variant that could not run fails; applyExpectations sets verdicts and the run verdict', () => {
    const a = variant('pre-attestation');
    const b = variant('disabled', { error: 'agent did not start' });
    expect(applyExpectations([a, b], { 'pre-attestation': { oomKilled: false }, disabled: { oomKilled: true } })).toBe('failed');
    expect(a).toMatchObject({ verdict: 'passed', passed: true });
    expect(b.expectations[0]).toMatchObject({ name: 'run', verdict: 'failed' });
    const c = variant('disabled', { oomKills: 2, deaths: [{ rep: 1, atMs: 30_400, phase: 'stop', cause: 'oom-kill', detail: '', counted: true }] });
    expect(applyExpectations([c], { disabled: { oomKilled: false } })).toBe('failed');
    expect(c.expectations[0]!.message).toBe('OOM-killed 2 time(s) (in stop), expected none');
    const post = killed('post-attestation');
    const dis = killed('disabled');
    expect(applyExpectations([post, dis], { 'post-attestation': { minPeakRatio: { to: 'disabled', value: 0.8 } } })).toBe('inconclusive');
    expect(post).toMatchObject({ verdict: 'inconclusive', passed: true });
    expect(applyExpectations([post, dis], { 'post-attestation': { minPeakRatio: { to: 'disabled', value: 0.8 } } }, true)).toBe('inconclusive');
    expect(post.passed).toBe(false);
  });
});

describe('OOM detector', () => {
  const base = { code: null, signal: null, stopRequested: false, watchdogKilled: false, oomKillsBefore: 0, oomKillsAfter: 0 } as const;
  it('a rising oom_kill counter is an OOM kill whatever the exit looks like', () => {
    expect(judgeExit({ ...base, signal: 'SIGKILL', oomKillsAfter: 1 })).toMatchObject({ cause: 'oom-kill', kernelOomKills: 1 });
    expect(judgeExit({ ...base, signal: 'SIGTERM', stopRequested: true, oomKillsAfter: 2 })).toMatchObject({ cause: 'oom-kill', kernelOomKills: 2 });
  });
  it('an unrequested SIGKILL in a memory cgroup is an OOM kill; outside one it is just a signal', () => {
    expect(judgeExit({ ...base, signal: 'SIGKILL' }).cause).toBe('oom-kill');
    expect(judgeExit({ ...base, signal: 'SIGKILL', oomKillsBefore: null, oomKillsAfter: null }).cause).toBe('signal');
    expect(judgeExit({ ...base, signal: 'SIGKILL', oomKillsBefore: null, oomKillsAfter: null, watchdogKilled: true }).cause).toBe('emulated-oom');
  });
  it('requested stops and plain exits are not OOM kills', () => {
    expect(judgeExit({ ...base, signal: 'SIGKILL', stopRequested: true }).cause).toBe('stopped');
    expect(judgeExit({ ...base, code: 1 })).toMatchObject({ cause: 'exit', detail: 'exited with code 1' });
  });
});

describe('restart back-off', () => {
  it('10 s doubling, capped at 5 min, reset after a long healthy run', () => {
    const b = new RestartBackoff({ initialMs: 10_000, maxMs: 300_000, resetAfterMs: 600_000 });
    const delays = Array.from({ length: 7 }, () => b.nextDelay(1000));
    expect(delays).toEqual([10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000]);
    expect(b.restarts).toBe(7);
    expect(b.nextDelay(600_000)).toBe(10_000);
    expect(b.nextDelay(0)).toBe(20_000);
  });
});

describe("an unmeasured peak (nothing could read the agent's memory)", () => {
  it('is null, never 0: peak rules and ratios are inconclusive, the table says unmeasured', () => {
    const pre = variant('pre-attestation', { peakMemoryBytes: null });
    const dis = variant('disabled', { peakMemoryBytes: 100 * MiB });
    const r = evaluateExpectations(pre, { maxPeakMemory: '64Mi', minPeakMemory: '1Mi', maxPeakRatio: { to: 'disabled', value: 0.5 } } as never, [pre, dis]);
    expect(r.map((e) => [e.name, e.verdict, e.actual, e.basis])).toEqual([
      ['maxPeakMemory', 'inconclusive', null, 'none'],
      ['minPeakMemory', 'inconclusive', null, 'none'],
      ['maxPeakRatio', 'inconclusive', null, 'none'],
    ]);
    expect(r[0]!.message).toBe("peak working set unmeasured: nothing could read the agent's memory in this run");
    expect(r[2]!.message).toBe("this variant's peak working set is unmeasured in this run, so the ratio cannot be judged");
    const table = comparisonTable({
      variants: [pre, dis],
      droppedExpectations: [],
      scenario: { modeledCosts: {} },
      status: 'complete',
      verdict: 'inconclusive',
    } as never);
    expect(table).toMatch(/\npre-attestation +unmeasured\/128 +0 /);
  });

  it('repetitions without a reading give a null peak, not a 0; measured ones alone make the spread', () => {
    const agent = { kind: 'reference', placement: 'disabled', key: null } as const;
    const base: RepMeasurement = {
      runDir: 'disabled.r1',
      memoryLimitBytes: 128 * MiB,
      peaks: { ...NO_PEAKS },
      peakSource: 'unmeasured',
      oomKills: 0,
      restarts: 0,
      downtimeSeconds: 0,
      loadSeconds: 10,
      counts: { ok: 10, rateLimited: 0, deadlineExceeded: 0, error: 0 },
      histograms: {},
      peakInflightAttestations: null,
      rejectionsByKeyType: {},
      workerMemoryBytes: null,
      deaths: [],
    };
    const none = aggregateVariant('disabled', agent, [base, { ...base, runDir: 'disabled.r2' }], () => null);
    expect(none.peakMemoryBytes).toBeNull();
    expect(none.spread.peakMemoryBytes).toBeUndefined();
    const some = aggregateVariant('disabled', agent, [base, { ...base, runDir: 'disabled.r2', peaks: measured(40 * MiB), peakSource: 'kernel' }], () => null);
    expect(some.peakMemoryBytes).toBe(40 * MiB);
    expect(some.spread.peakMemoryBytes).toEqual({ min: 40 * MiB, median: 40 * MiB, max: 40 * MiB });
  });

  it("carries the kubelet's request rate (median) and the agent's highest connections and goroutines (max) when measured", () => {
    const agent = { kind: 'spire', placement: 'disabled', key: null } as const;
    const base: RepMeasurement = {
      runDir: 'v.r1',
      memoryLimitBytes: 128 * MiB,
      peaks: measured(50 * MiB),
      peakSource: 'kernel',
      oomKills: 0,
      restarts: 0,
      downtimeSeconds: 0,
      loadSeconds: 10,
      counts: { ok: 10, rateLimited: 0, deadlineExceeded: 0, error: 0 },
      histograms: {},
      peakInflightAttestations: null,
      rejectionsByKeyType: {},
      workerMemoryBytes: null,
      deaths: [],
    };
    const without = aggregateVariant('v', agent, [base], () => null);
    expect(without.kubeletRequestsPerSecond).toBeUndefined();
    expect(without.agentPeaks).toBeUndefined();
    const reps = [
      { ...base, kubelet: { requests: 20, seconds: 10 }, agentPeaks: { openConnections: 12, goroutines: 300 } },
      { ...base, runDir: 'v.r2', kubelet: { requests: 40, seconds: 10 }, agentPeaks: { openConnections: 30, goroutines: null } },
      { ...base, runDir: 'v.r3', kubelet: { requests: 90, seconds: 10 } },
    ];
    const v = aggregateVariant('v', agent, reps, () => null);
    expect(v.kubeletRequestsPerSecond).toBe(4);
    expect(v.agentPeaks).toEqual({ openConnections: 30, goroutines: 300 });
  });
});

describe('aggregation of repetitions', () => {
  const rep = (over: Partial<RepMeasurement>): RepMeasurement => ({
    runDir: 'disabled.r1',
    memoryLimitBytes: 128 * MiB,
    peaks: { ...NO_PEAKS },
    oomKills: 0,
    restarts: 0,
    downtimeSeconds: 0,
    loadSeconds: 10,
    counts: { ok: 0, rateLimited: 0, deadlineExceeded: 0, error: 0 },
    histograms: {},
    peakInflightAttestations: null,
    rejectionsByKeyType: {},
    workerMemoryBytes: null,
    deaths: [],
    ...over,
  });
  const agent = { kind: 'reference', placement: 'disabled', key: null } as const;
  it("the workers' client: beside the one asked for, the reason only where they differ; a repetition that fell back is the one reported", () => {
    expect(loadClientRecord('native', 'native', 'ignored')).toEqual({ requested: 'native', ran: 'native' });
    const fallback = loadClientRecord('native', 'h2', 'no C compiler');
    expect(fallback).toEqual({ requested: 'native', ran: 'h2', reason: 'no C compiler' });
    const native = loadClientRecord('native', 'native');
    expect(aggregateVariant('disabled', agent, [rep({ loadClient: native }), rep({ runDir: 'disabled.r2' })], () => null).loadClient).toEqual(native);
    const mixed = aggregateVariant('disabled', agent, [rep({ loadClient: native }), rep({ runDir: 'disabled.r2', loadClient: fallback })], () => null);
    expect(mixed.loadClient).toEqual(fallback);
    expect(aggregateVariant('disabled', agent, [rep({})], () => null).loadClient).toBeUndefined();
  });

  it('repetitions the machine could not start in time leave the variant not judged, never failed', () => {
    const slow = 'the machine could not start the storm in time (pod storm-0: not ready within 59400 ms)';
    const r = aggregateVariant(
      'disabled',
      agent,
      [rep({ loadSeconds: 0, notJudged: slow }), rep({ runDir: 'disabled.r2', loadSeconds: 0, notJudged: slow })],
      () => null,
    );
    expect(r.error).toBeUndefined();
    expect(r.notJudged).toBe(slow);
    expect(applyExpectations([r], { disabled: { oomKilled: true, maxPeakMemory: '200Mi' } })).toBe('inconclusive');
    expect(r.expectations.map((e) => [e.name, e.verdict])).toEqual([
      ['oomKilled', 'inconclusive'],
      ['maxPeakMemory', 'inconclusive'],
    ]);
    expect(r.expectations[0]!.message).toBe(`not judged: ${slow}`);
    expect(r).toMatchObject({ verdict: 'inconclusive', passed: true });
    applyExpectations([r], { disabled: { oomKilled: true } }, true);
    expect(r.passed).toBe(false);
    // One judged repetition is data: the others' slowness does not hide it.
    const mixed = aggregateVariant('disabled', agent, [rep({ loadSeconds: 10 }), rep({ runDir: 'disabled.r2', loadSeconds: 0, notJudged: slow })], () => null);
    expect(mixed.notJudged).toBeUndefined();
  });

  it('median figures with min–max spreads, summed OOMs/restarts/downtime, merged histograms', () => {
    const seen: string[][] = [];
    const r = aggregateVariant(
      'disabled',
      agent,
      [
        rep({
          runDir: 'disabled.r1',
          peaks: measured(100),
          oomKills: 1,
          restarts: 1,
          downtimeSeconds: 10.04,
          counts: { ok: 100, rateLimited: 0, deadlineExceeded: 10, error: 20 },
          histograms: { ok: 'A' },
          peakInflightAttestations: 5,
          rejectionsByKeyType: { pod_uid: 3 },
          workerMemoryBytes: 10,
        }),
        rep({
          runDir: 'disabled.r2',
          peaks: measured(300),
          oomKills: 2,
          restarts: 2,
          downtimeSeconds: 5,
          loadSeconds: 20,
          counts: { ok: 400, rateLimited: 0, deadlineExceeded: 0, error: 0 },
          histograms: { ok: 'B', error: 'C' },
          peakInflightAttestations: 9,
          rejectionsByKeyType: { pod_uid: 1, os_uid: 2 },
          workerMemoryBytes: 30,
        }),
        rep({ runDir: 'disabled.r3', peaks: measured(200), counts: { ok: 50, rateLimited: 0, deadlineExceeded: 0, error: 0 } }),
      ],
      (enc) => {
        seen.push(enc);
        return { count: enc.length, p50Ms: 1, p90Ms: 2, p99Ms: 3, p999Ms: 4, maxMs: 5 };
      },
    );
    expect(r).toMatchObject({
      runDirs: ['disabled.r1', 'disabled.r2', 'disabled.r3'],
      peakMemoryBytes: 200,
      oomKills: 3,
      restarts: 3,
      downtimeSeconds: 15,
      okRps: 10,
      peakInflightAttestations: 9,
      rejectionsByKeyType: { pod_uid: 4, os_uid: 2 },
      workerMemoryBytes: 20,
    });
    expect(r.spread.peakMemoryBytes).toEqual({ min: 100, median: 200, max: 300 });
    expect(r.spread.okRps).toEqual({ min: 5, median: 10, max: 20 });
    expect(seen).toEqual([['A', 'B'], ['C']]);
    expect(r.latency.ok!.count).toBe(2);
    expect(r.error).toBeUndefined();
  });
  it('calls the generator counted in a later second are summed across repetitions, with a note above 1%', () => {
    const gen = { calls: 1000, workersStarted: 10, workerCpuSeconds: 1, offeredWorkers: 10, cores: 2, lateCalls: 0, maxLateSeconds: 0 };
    const clean = aggregateVariant('disabled', agent, [rep({ generator: gen }), rep({ runDir: 'disabled.r2', generator: gen })], () => null);
    expect(clean.storm!.lateCalls).toBeUndefined();
    expect(clean.storm!.late).toBeUndefined();
    const few = aggregateVariant(
      'disabled',
      agent,
      [rep({ generator: { ...gen, lateCalls: 10, maxLateSeconds: 1 } }), rep({ runDir: 'disabled.r2', generator: gen })],
      () => null,
    );
    expect(few.storm!.lateCalls).toBe(10);
    expect(few.storm!.late).toBeUndefined();
    const many = aggregateVariant(
      'disabled',
      agent,
      [
        rep({ generator: { ...gen, lateCalls: 700, maxLateSeconds: 14 } }),
        rep({ runDir: 'disabled.r2', generator: { ...gen, lateCalls: 50, maxLateSeconds: 3 } }),
      ],
      () => null,
    );
    expect(many.storm!.lateCalls).toBe(750);
    expect(many.storm!.late).toBe('750 of 2000 calls (37.5%) reached the generator up to 14 s late and are counted in a later second of the rate series');
  });

  it('the generator and agent CPU of the load phase name who held the storm back; crashed workers are counted', () => {
    const gen = { calls: 1000, workersStarted: 1200, workerCpuSeconds: 1, offeredWorkers: 1200, cores: 2, lateCalls: 0, maxLateSeconds: 0 };
    const machine = { busyCores: 1.99, agentCpuCores: 0.31, loadAverage: 900, generatorCores: 0.01, runnerCores: 0.05, agentCpus: 1 };
    const held = aggregateVariant(
      'disabled',
      agent,
      [rep({ generator: { ...gen, workerCrashes: 2 }, machine }), rep({ runDir: 'disabled.r2', generator: gen, machine })],
      () => null,
    );
    expect(held.storm).toMatchObject({ generatorCpuCores: 0.01, runnerCpuCores: 0.05, agentCpuCores: 0.31, workerCrashes: 2, limitedBy: { by: 'generator' } });
    expect(held.storm!.limitedBy!.detail).toMatch(/other processes took about 0\.8\d of them/);
    // A quiet machine: nobody at a CPU limit, nothing claimed; crashes of a few workers limit nothing.
    const quiet = aggregateVariant(
      'disabled',
      agent,
      [rep({ generator: { ...gen, workerCrashes: 2 }, machine: { ...machine, busyCores: 0.6, generatorCores: 0.2 } })],
      () => null,
    );
    expect(quiet.storm!.limitedBy).toBeUndefined();
    // Most workers crashed: the generator's shortfall, with the count.
    const crashed = aggregateVariant('disabled', agent, [rep({ generator: { ...gen, workerCrashes: 900 } })], () => null);
    expect(crashed.storm!.limitedBy).toEqual({ by: 'generator', detail: '900 workers crashed in 1 repetition(s) (counted, not restarted)' });
  });

  it('one median definition: the middle value, or the mean of the two middle ones', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 2, 3])).toBe(2.5);
    expect(median([])).toBe(0);
  });
  it('a variant with no measured repetition carries the error', () => {
    const r = aggregateVariant(
      'pre-attestation',
      { kind: 'reference', placement: 'pre-attestation', key: 'pod-uid' },
      [rep({ loadSeconds: 0, error: 'agent did not start' })],
      () => null,
    );
    expect(r.error).toBe('agent did not start');
  });
});
