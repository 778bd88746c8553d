import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  bystanderLoadOptions,
  bystanderExpectProblems,
  bystanderExpectShape,
  bystanderSandboxOptions,
  bystandersServedSentence,
  evaluateBystanderExpectations,
  formatBystanderLine,
  formatStatusLine,
  mergeBystanderRuns,
  parseBystanders,
  validateLoadOptions,
  validateBystanderLoadOptions,
  type BystanderRun,
} from '../../src/load/index.js';
import { encodeHistogram, newHistogram } from '../../src/load/histograms.js';
import { OkGapTracker } from '../../src/load/worker/ok-gap.js';
import { parseSandboxOptions } from '../../src/sandbox/index.js';
import { configProblems } from '../support/config-problems.js';

const problems = configProblems;

describe('load.bystanders schema', () => {
  it('fills the defaults of a well-behaved workload', () => {
    expect(parseBystanders({})).toEqual({
      pods: 1,
      workersPerPod: 1,
      rate: 1,
      deadline: 5000,
      retry: 'backoff',
      connection: 'per-worker',
      method: 'FetchJWTSVID',
      uid: 'same',
    });
  });

  it('reads durations and maps onto runLoad and createSandbox options', () => {
    const b = parseBystanders({
      pods: 2,
      workersPerPod: 3,
      rate: 0.5,
      deadline: '2s',
      retry: 'immediate',
      connection: 'per-call',
      method: 'FetchX509SVID',
      uid: 'own',
    });
    expect(bystanderLoadOptions(b)).toEqual({
      pods: 2,
      workersPerPod: 3,
      rate: 0.5,
      deadlineMs: 2000,
      retry: 'immediate',
      connection: 'per-call',
      method: 'FetchX509SVID',
    });
    expect(bystanderSandboxOptions(b)).toEqual({ pods: 2, uid: 'own' });
    expect(validateBystanderLoadOptions({ pods: 1 })).toEqual({
      pods: 1,
      workersPerPod: 1,
      rate: 1,
      deadlineMs: 5000,
      retry: 'backoff',
      connection: 'per-worker',
      method: 'FetchJWTSVID',
    });
  });

  it('lists every problem, each naming the key and the rule', () => {
    const text = problems(() =>
      parseBystanders({
        pods: 0,
        workersPerPod: 1.5,
        rate: -2,
        deadline: 'soon',
        retry: 'never',
        connection: 'per-thread',
        method: 'FetchSecrets',
        uid: 'root',
        extra: 1,
      }),
    ).join('\n');
    expect(text).toMatch(/load\.bystanders\.pods: must be a positive integer, got 0/);
    expect(text).toMatch(/load\.bystanders\.workersPerPod: must be a positive integer, got 1\.5/);
    expect(text).toMatch(/load\.bystanders\.rate: must be a positive number of calls per second per worker, got -2/);
    expect(text).toMatch(/load\.bystanders\.deadline must be a duration like 500ms, 30s or 2m, got "soon"/);
    expect(text).toMatch(/load\.bystanders\.retry: must be one of immediate, backoff, got "never"/);
    expect(text).toMatch(/load\.bystanders\.connection: must be one of per-call, per-worker, per-retry, got "per-thread"/);
    expect(text).toMatch(/load\.bystanders\.method: must be one of FetchJWTSVID, .*, got "FetchSecrets"/);
    expect(text).toMatch(/load\.bystanders\.uid: must be one of same, own, got "root"/);
    expect(text).toMatch(/load\.bystanders: unknown key\(s\) extra/);
  });

  it('is part of the load options, so the load block of a scenario validates in one call', () => {
    const base = { socket: '/tmp/a.sock', pods: 2, workersPerPod: 3, durationMs: 5000 };
    expect(validateLoadOptions(base).bystanders).toBeUndefined();
    expect(validateLoadOptions({ ...base, bystanders: { pods: 2, rate: 0.5 } }).bystanders).toEqual({
      pods: 2,
      workersPerPod: 1,
      rate: 0.5,
      deadlineMs: 5000,
      retry: 'backoff',
      connection: 'per-worker',
      method: 'FetchJWTSVID',
    });
    expect(problems(() => validateLoadOptions({ ...base, bystanders: { pods: 1, uid: 'own' } })).join()).toMatch(/load\.bystanders: unknown key\(s\) uid/);
  });

  it('bounds bystanders to a few well-behaved pods', () => {
    expect(problems(() => parseBystanders({ pods: 101 })).join()).toMatch(/pods: must be at most 100, got 101/);
    expect(problems(() => parseBystanders({ rate: 5000 })).join()).toMatch(/rate: must be at most 1000 calls per second per worker/);
    expect(problems(() => parseBystanders({ deadline: '11m' })).join()).toMatch(/deadline: must be between 1 ms and 10 minutes, got "11m"/);
    expect(problems(() => validateBystanderLoadOptions({})).join()).toMatch(/load\.bystanders\.pods: must be a positive integer, got nothing/);
  });

  it('the sandbox takes a bystander group and checks it', () => {
    expect(parseSandboxOptions({ runId: 'r1', pods: 2, bystanders: { pods: 3 } }).bystanders).toEqual({ pods: 3, uid: 'same' });
    expect(parseSandboxOptions({ runId: 'r1', pods: 2 }).bystanders).toBeUndefined();
    expect(problems(() => parseSandboxOptions({ runId: 'r1', pods: 2, bystanders: { pods: 0, uid: 'x' } })).join('\n')).toMatch(
      /sandbox\.bystanders\.pods: must be a positive integer, got 0[\s\S]*sandbox\.bystanders\.uid/,
    );
  });
});

describe('bystander summary', () => {
  function run(ok: number[], failed: Record<string, number>, gap: number): BystanderRun {
    const h = newHistogram();
    for (const us of ok) h.recordValue(us);
    const enc = encodeHistogram(h);
    h.destroy();
    const errors = Object.values(failed).reduce((a, b) => a + b, 0);
    const totals = { calls: ok.length + errors, ok: ok.length, rateLimited: errors, deadlineExceeded: 0, error: 0, byCode: { OK: ok.length, ...failed } };
    return {
      summary: { calls: 0, ok: 0, successRatio: 0, p50Ms: null, p99Ms: null, longestGapMs: gap, byStatus: {} },
      totals,
      latency: {},
      histograms: ok.length ? { ok: enc } : {},
      pods: {},
      workers: 1,
    };
  }

  it('merges repetitions: counts and statuses summed, percentiles from merged histograms, the longest gap', () => {
    const merged = mergeBystanderRuns([run([1000, 2000, 3000], { UNAVAILABLE: 1 }, 1200), run([100_000], { UNAVAILABLE: 3 }, 4500)]);
    expect(merged.calls).toBe(8);
    expect(merged.ok).toBe(4);
    expect(merged.successRatio).toBe(0.5);
    expect(merged.byStatus).toEqual({ OK: 4, UNAVAILABLE: 4 });
    expect(merged.p50Ms).toBeCloseTo(2, 1);
    expect(merged.p99Ms).toBeCloseTo(100, -1);
    expect(merged.longestGapMs).toBe(4500);
  });

  it("renders one line for the CLI, and the live status line gains the bystanders' second", () => {
    const r = run([1000, 2000, 3000], { UNAVAILABLE: 1 }, 1200);
    r.summary = mergeBystanderRuns([r]);
    r.pods = { u1: { name: 'bystander-abc', ok: 3, rateLimited: 1, error: 0 } };
    expect(formatBystanderLine(r)).toMatch(
      /^bystanders: 4 calls from 1 workers in 1 pod, 75\.0% ok, p50 2\.0 ms, p99 3\.0 ms, longest gap 1\.20 s; OK 3, UNAVAILABLE 1$/,
    );
    const sample = { kind: 'load' as const, t: 0, ok: 10, rateLimited: 5, deadlineExceeded: 0, error: 0, byCode: {}, histograms: {} };
    expect(formatStatusLine(sample)).not.toMatch(/bystanders/);
    expect(formatStatusLine({ ...sample, bystanders: { ok: 1, rateLimited: 2, deadlineExceeded: 0, error: 0, byCode: {}, histograms: {} } })).toMatch(
      /bystanders ok 1\/3$/,
    );
  });

  it('a run where no bystander call succeeded has no latency and a zero success ratio', () => {
    const merged = mergeBystanderRuns([run([], { UNAVAILABLE: 5 }, 6000)]);
    expect(merged).toMatchObject({ calls: 5, ok: 0, successRatio: 0, p50Ms: null, p99Ms: null, longestGapMs: 6000 });
    expect(mergeBystanderRuns([])).toMatchObject({ calls: 0, successRatio: 0, p50Ms: null });
  });
});

describe('OkGapTracker (worker side)', () => {
  it('measures the longest stretch between successes, from the start and to the end of the phase', () => {
    const g = new OkGapTracker();
    g.start(1000, 7000);
    g.ok(1400); // start → first: 400
    g.ok(1900); // 500
    g.ok(4900); // 3000
    g.ok(5000);
    expect(g.finish(7000)).toBe(3000);
  });

  it('closes the last gap at the end: a worker that stopped succeeding early has a long gap', () => {
    const g = new OkGapTracker();
    g.start(0, 6000);
    g.ok(500);
    expect(g.finish(6000)).toBe(5500);
  });

  it('never succeeding is the whole phase; an answer after the end counts at the end; no phase, no gap', () => {
    const none = new OkGapTracker();
    none.start(0, 6000);
    expect(none.finish(6000)).toBe(6000);
    const late = new OkGapTracker();
    late.start(0, 6000);
    late.ok(9000);
    expect(late.finish(9500)).toBe(6000);
    const early = new OkGapTracker();
    early.start(0, 6000);
    early.ok(1000);
    expect(early.finish(2500)).toBe(1500); // stopped (aborted) at 2.5 s
    expect(new OkGapTracker().finish(100)).toBe(0);
  });
});

describe('bystander expectations and the verdict sentence', () => {
  const served = { calls: 24, ok: 24, successRatio: 1, p50Ms: 36, p99Ms: 322, longestGapMs: 567, byStatus: { OK: 24 } };
  const starved = { calls: 17, ok: 4, successRatio: 4 / 17, p50Ms: 97, p99Ms: 293, longestGapMs: 5500, byStatus: { OK: 4, UNAVAILABLE: 13 } };
  const expectSchema = z.strictObject(bystanderExpectShape);

  it('parses the two keys with units and bounds', () => {
    expect(expectSchema.parse({ minBystanderSuccess: 0.9, maxBystanderGap: '2s' })).toEqual({ minBystanderSuccess: 0.9, maxBystanderGap: 2000 });
    expect(expectSchema.safeParse({ minBystanderSuccess: 1.5 }).error?.issues[0]?.message).toBe('must be a ratio between 0 and 1');
    expect(expectSchema.safeParse({ maxBystanderGap: 'soon' }).success).toBe(false);
  });

  it('passes the served, fails the starved, with messages naming the figures', () => {
    const rules = { minBystanderSuccess: 0.9, maxBystanderGap: 2000 };
    expect(evaluateBystanderExpectations(rules, served).map((r) => [r.name, r.verdict, r.actual, r.message])).toEqual([
      ['minBystanderSuccess', 'passed', 1, 'bystanders served 100.0% (24/24) >= 90.0%'],
      ['maxBystanderGap', 'passed', 567, 'longest bystander gap without a success 567ms <= 2s'],
    ]);
    expect(evaluateBystanderExpectations(rules, starved).map((r) => [r.verdict, r.basis, r.message])).toEqual([
      ['failed', 'measured', 'bystanders served 23.5% (4/17) < 90.0%'],
      ['failed', 'measured', 'longest bystander gap without a success 5.5s > 2s'],
    ]);
    expect(evaluateBystanderExpectations(rules, undefined).map((r) => r.verdict)).toEqual(['inconclusive', 'inconclusive']);
    expect(evaluateBystanderExpectations(undefined, served)).toEqual([]);
  });

  it('bystander rules without bystanders are a scenario problem', () => {
    expect(bystanderExpectProblems({ minBystanderSuccess: 0.5 }, false, 'expect.pre-attestation')).toEqual([
      'expect.pre-attestation.minBystanderSuccess needs bystanders to measure: set load.bystanders (e.g. load.bystanders: {}) or drop the rule',
    ]);
    expect(bystanderExpectProblems({ minBystanderSuccess: 0.5 }, true)).toEqual([]);
  });

  it('leads the verdict with the share served per variant', () => {
    expect(bystandersServedSentence([{ name: 'pre-attestation', bystanders: served }, { name: 'os-uid', bystanders: starved }, { name: 'none' }])).toBe(
      'bystanders served: pre-attestation 100%, os-uid 24%',
    );
    expect(bystandersServedSentence([{ name: 'disabled' }])).toBeNull();
  });
});
