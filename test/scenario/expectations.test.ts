import { describe, expect, it } from 'vitest';
import { aggregatePlacement, applyExpectations, evaluateExpectations, judgeExit, OomCounter, RestartBackoff, type RepMeasurement } from '../../src/scenario/index.js';
import type { PlacementResult } from '../../src/scenario/index.js';

const MiB = 2 ** 20;

function placement(name: PlacementResult['name'], over: Partial<PlacementResult> = {}): PlacementResult {
  return {
    name, runDirs: [`${name}.r1`], memoryLimitBytes: 128 * MiB, peakMemoryBytes: 50 * MiB, oomKills: 0, restarts: 0, downtimeSeconds: 0,
    okRps: 40, rejectedRps: 100, errorRps: 0, deadlineExceededRps: 0, latency: {}, peakInflightAttestations: 3,
    rejectionsByKeyType: {}, workerMemoryBytes: null, expectations: [], passed: false, ...over,
  };
}

describe('expectations', () => {
  it('checks absolute rules and quotes values as written', () => {
    const p = placement('pre-attestation', { peakMemoryBytes: 60 * MiB, okRps: 4, errorRps: 1, deadlineExceededRps: 2, restarts: 1 });
    const r = evaluateExpectations(p, { oomKilled: false, maxPeakMemory: '64Mi', minPeakMemory: '61Mi', minOkRps: 5, maxErrorRps: 2, maxRestarts: 0 }, [p]);
    expect(r.map((e) => [e.name, e.passed])).toEqual([
      ['oomKilled', true], ['maxPeakMemory', true], ['minPeakMemory', false], ['minOkRps', false], ['maxErrorRps', false], ['maxRestarts', false],
    ]);
    expect(r[1]).toMatchObject({ expected: '64Mi', actual: 60 * MiB, message: 'peak memory 60.0 MiB <= 64.0 MiB' });
    expect(r[4]!.message).toBe('failed calls 3.0/s > 2.0/s');
  });

  it('ratios: max against the other peak; min holds when OOM-killed; skipped when the other is absent', () => {
    const pre = placement('pre-attestation', { peakMemoryBytes: 40 * MiB });
    const post = placement('post-attestation', { peakMemoryBytes: 90 * MiB, oomKills: 1 });
    const dis = placement('disabled', { peakMemoryBytes: 100 * MiB });
    const all = [pre, post, dis];
    const [max] = evaluateExpectations(pre, { maxPeakRatio: { to: 'disabled', value: 0.6 } }, all);
    expect(max).toMatchObject({ passed: true, actual: 0.4 });
    const [min] = evaluateExpectations(post, { minPeakRatio: { to: 'disabled', value: 1.5 } }, all);
    expect(min!.passed).toBe(true);
    expect(min!.message).toMatch(/^OOM-killed 1×/);
    const [fail] = evaluateExpectations(pre, { minPeakRatio: { to: 'disabled', value: 0.8 } }, all);
    expect(fail).toMatchObject({ passed: false, message: 'peak 0.40× disabled (40.0 MiB / 100.0 MiB) < 0.8× and not OOM-killed' });
    // An OOM-killed reference peaked at its limit.
    const [vsOom] = evaluateExpectations(pre, { maxPeakRatio: { to: 'post-attestation', value: 0.3 } }, all);
    // 40 MiB against post's 128 MiB limit (its peak sample said 90): 0.3125 > 0.3 fails.
    expect(vsOom).toMatchObject({ passed: false, actual: 0.3125 });
    const [skip] = evaluateExpectations(pre, { maxPeakRatio: { to: 'disabled', value: 0.6 } }, [pre]);
    expect(skip).toMatchObject({ passed: true, message: 'skipped: disabled was not measured in this run' });
  });

  it('a placement that could not run fails its expectations; applyExpectations sets passed', () => {
    const a = placement('pre-attestation');
    const b = placement('disabled', { error: 'agent did not start' });
    expect(applyExpectations([a, b], { 'pre-attestation': { oomKilled: false }, disabled: { oomKilled: true } })).toBe(false);
    expect(a.passed).toBe(true);
    expect(b.expectations[0]).toMatchObject({ name: 'run', passed: false });
    const c = placement('disabled', { oomKills: 2 });
    expect(applyExpectations([c], { disabled: { oomKilled: false } })).toBe(false);
    expect(c.expectations[0]!.message).toBe('OOM-killed 2 time(s), expected none');
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
  it('counts counter increments while sampling', () => {
    const c = new OomCounter();
    expect(c.observe(3)).toBe(0);
    expect(c.observe(3)).toBe(0);
    expect(c.observe(5)).toBe(2);
    expect(c.observe(4)).toBe(0);
    expect(c.total).toBe(2);
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

describe('aggregation of repetitions', () => {
  const rep = (over: Partial<RepMeasurement>): RepMeasurement => ({
    runDir: 'disabled.r1', memoryLimitBytes: 128 * MiB, peakMemoryBytes: 0, oomKills: 0, restarts: 0, downtimeSeconds: 0, loadSeconds: 10,
    counts: { ok: 0, rateLimited: 0, deadlineExceeded: 0, error: 0 }, histograms: {}, peakInflightAttestations: null,
    rejectionsByKeyType: {}, workerMemoryBytes: null, ...over,
  });
  it('max peak, summed OOMs/restarts/downtime, mean rates, merged histograms', () => {
    const seen: string[][] = [];
    const r = aggregatePlacement('disabled', [
      rep({ runDir: 'disabled.r1', peakMemoryBytes: 100, oomKills: 1, restarts: 1, downtimeSeconds: 10.04, counts: { ok: 100, rateLimited: 0, deadlineExceeded: 10, error: 20 }, histograms: { ok: 'A' }, peakInflightAttestations: 5, rejectionsByKeyType: { pod_uid: 3 }, workerMemoryBytes: 10 }),
      rep({ runDir: 'disabled.r2', peakMemoryBytes: 300, oomKills: 2, restarts: 2, downtimeSeconds: 5, loadSeconds: 20, counts: { ok: 400, rateLimited: 0, deadlineExceeded: 0, error: 0 }, histograms: { ok: 'B', error: 'C' }, peakInflightAttestations: 9, rejectionsByKeyType: { pod_uid: 1, os_uid: 2 }, workerMemoryBytes: 30 }),
    ], (enc) => {
      seen.push(enc);
      return { count: enc.length, p50Ms: 1, p90Ms: 2, p99Ms: 3, p999Ms: 4, maxMs: 5 };
    });
    expect(r).toMatchObject({ runDirs: ['disabled.r1', 'disabled.r2'], peakMemoryBytes: 300, oomKills: 3, restarts: 3, downtimeSeconds: 15, okRps: 15, errorRps: 1, deadlineExceededRps: 0.5, peakInflightAttestations: 9, rejectionsByKeyType: { pod_uid: 4, os_uid: 2 }, workerMemoryBytes: 30 });
    expect(seen).toEqual([['A', 'B'], ['C']]);
    expect(r.latency.ok!.count).toBe(2);
    expect(r.error).toBeUndefined();
  });
  it('a placement with no measured repetition carries the error', () => {
    const r = aggregatePlacement('pre-attestation', [rep({ loadSeconds: 0, error: 'agent did not start' })], () => null);
    expect(r.error).toBe('agent did not start');
  });
});
