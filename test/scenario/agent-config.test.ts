import { describe, expect, it } from 'vitest';
import { parseAgentConfig } from '../../src/agent/index.js';
import { comparisonTable, parseScenario, Progress, type ReferenceAgent, type RunResults } from '../../src/scenario/index.js';
import { buildAgentConfig, modeledCosts } from '../../src/targets/index.js';
import { deepMerge } from '../../src/util/index.js';

const ep = { socket: '/tmp/a.sock', kubeletUrl: 'http://127.0.0.1:1234', tokenFile: '/tmp/token', caFile: null };

describe('agent config per placement', () => {
  const { scenario } = parseScenario({
    name: 'x',
    agent: {
      k8s: { pollInterval: '250ms', maxPollAttempts: 7 },
      model: { attestationWorkingSet: '256Ki', podListWorkingSet: '22Mi' },
      keys: { 'post-attestation': 'spiffe-id' },
      extra: { trustDomain: 'storm.test', rateLimit: { gcInterval: '30s' } },
    },
  });

  it('differs between placements only in the limiter slot, and the agent accepts it', () => {
    const agentOf = (name: string) => scenario.variants.find((v) => v.name === name)!.agent as ReferenceAgent;
    const pre = buildAgentConfig(agentOf('pre-attestation'), ep);
    const post = buildAgentConfig(agentOf('post-attestation'), ep);
    const off = buildAgentConfig(agentOf('disabled'), ep);
    expect(pre.rateLimit).toMatchObject({ placement: 'pre-attestation', key: 'pod-uid', limits: { fetch_jwt_svid: 10 }, gcInterval: '30s' });
    expect(post.rateLimit).toMatchObject({ placement: 'post-attestation', key: 'spiffe-id' });
    expect((off.rateLimit as Record<string, unknown>).key).toBeUndefined();
    const strip = (c: Record<string, unknown>) => ({ ...c, rateLimit: null });
    expect(strip(pre)).toEqual(strip(off));
    for (const cfg of [pre, post, off]) {
      const parsed = parseAgentConfig(cfg);
      // Durations reach the agent in milliseconds (bare numbers would be read as seconds).
      expect(parsed.k8s.pollInterval).toBe(250);
      expect(parsed.k8s.maxPollAttempts).toBe(7);
      expect(parsed.k8s.tokenFile).toBe('/tmp/token');
      expect(parsed.model.attestationWorkingSet).toBe(256 * 1024);
      expect(parsed.model.podListWorkingSet).toBe(22 * 2 ** 20);
      // Unset: an attestation ends with its call, as in SPIRE.
      expect(parsed.model.cancelAbandoned).toBe(true);
      expect(parsed.trustDomain).toBe('storm.test');
      expect(parsed.metrics).toBe('127.0.0.1:0');
    }
    expect(modeledCosts(scenario)).toEqual({
      // The emulated kubelet's answer time is a modeled parameter of every variant too (0: none, left out of the words).
      'pre-attestation': { attestationWorkingSet: '256Ki', podListWorkingSet: '22Mi', kubeletLatency: 0 },
      'post-attestation': { attestationWorkingSet: '256Ki', podListWorkingSet: '22Mi', kubeletLatency: 0 },
      disabled: { attestationWorkingSet: '256Ki', podListWorkingSet: '22Mi', kubeletLatency: 0 },
    });
  });

  it('deep-merges extra config, arrays replaced', () => {
    expect(deepMerge({ a: { b: 1, c: [1] }, d: 1 }, { a: { c: [2] }, e: 2 })).toEqual({ a: { b: 1, c: [2] }, d: 1, e: 2 });
  });
});

describe('comparison table and progress', () => {
  it('shows peak as a share of the limit, OOMs, rates, p99 and failed expectations', () => {
    const results = {
      scenario: { modeledCosts: { attestationWorkingSet: '512Ki' } },
      droppedExpectations: [],
      variants: [
        {
          name: 'pre-attestation',
          agent: { kind: 'reference', placement: 'pre-attestation', key: 'pod-uid' },
          runDirs: ['pre-attestation.r1'],
          spread: {},
          deaths: [],
          memoryLimitBytes: 128 * 2 ** 20,
          peakMemoryBytes: 64 * 2 ** 20,
          oomKills: 0,
          restarts: 0,
          okRps: 1,
          rejectedRps: 2,
          errorRps: 3,
          deadlineExceededRps: 4,
          latency: { ok: { count: 1, p50Ms: 1, p90Ms: 2, p99Ms: 12.34, p999Ms: 4, maxMs: 5 } },
          expectations: [{ name: 'oomKilled', expected: false, actual: false, verdict: 'passed', basis: 'measured', message: 'not OOM-killed' }],
          verdict: 'passed',
          passed: true,
        },
        {
          name: 'disabled',
          agent: { kind: 'reference', placement: 'disabled', key: null },
          runDirs: ['disabled.r1'],
          spread: {},
          deaths: [{ rep: 1, atMs: 30_400, phase: 'stop', cause: 'oom-kill', detail: 'kernel', counted: true }],
          memoryLimitBytes: 128 * 2 ** 20,
          peakMemoryBytes: 128 * 2 ** 20,
          oomKills: 2,
          restarts: 2,
          okRps: 0,
          rejectedRps: 0,
          errorRps: 0,
          deadlineExceededRps: 0,
          latency: {},
          expectations: [
            { name: 'oomKilled', expected: false, actual: true, verdict: 'failed', basis: 'measured', message: 'OOM-killed 2 time(s), expected none' },
          ],
          verdict: 'failed',
          passed: false,
        },
      ],
    } as unknown as RunResults;
    const table = comparisonTable(results, { wide: true });
    expect(table).toMatch(/\npre-attestation +reference pre-attestation +128\.0 MiB +64\.0 \(50%\) +0 /);
    // Deadline exceeded and other errors are columns of their own, as in every report.
    expect(table).toMatch(/ 2\.0 +4\.0 +3\.0 +12\.3 /);
    expect(table).toMatch(/\ndisabled +reference disabled +128\.0 MiB +128\.0 \(100%\) +2 /);
    expect(table).toContain('disabled: oomKilled failed: OOM-killed 2 time(s), expected none');
    expect(table).toContain('disabled r1: oom-kill at 30.4 s, during stop');
    expect(table).toMatch(/every variant: each attestation in flight holds 512Ki more\s+\(model\.attestationWorkingSet\)/);
    // By default the essential columns: peak of limit, OOM kills and the verdict.
    expect(comparisonTable(results)).toMatch(/\ndisabled +128\.0\/128 +2 +- +0\.0 +0\.0 +FAILED\n/);
  });

  it('prints plain periodic lines when not on a TTY', () => {
    const out: string[] = [];
    const p = new Progress({ tty: false, plainEverySeconds: 1, columns: 200, stream: { write: (s: string) => out.push(s) } as never });
    p.placementStart('disabled', 20_000);
    p.onSample({ kind: 'memory', t: 0, usageBytes: 64 * 2 ** 20, rssBytes: null, peakBytes: 0, limitBytes: 128 * 2 ** 20, cpuSeconds: null });
    p.onSample({ kind: 'memory', t: 1000, usageBytes: 64 * 2 ** 20, rssBytes: null, peakBytes: 0, limitBytes: 128 * 2 ** 20, cpuSeconds: null });
    p.onSample({ kind: 'load', t: 1000, ok: 5, rateLimited: 6, deadlineExceeded: 1, error: 1, byCode: {}, histograms: {} });
    p.onSample({ kind: 'event', t: 2500, type: 'oom-kill', detail: 'kernel' });
    p.onSample({ kind: 'memory', t: 3100, usageBytes: 1, rssBytes: null, peakBytes: 0, limitBytes: 128 * 2 ** 20, cpuSeconds: null });
    p.stop();
    const text = out.join('');
    expect(text).toContain('disabled: starting');
    expect(text).toContain('disabled starting pods 1s | agent 64.0 MiB / 128 MiB (50%)');
    expect(text).toContain('disabled: OOM kill at 2.5s');
    expect(text).toMatch(/disabled 2\/20s \| agent 64\.0 MiB \/ 128 MiB \(50%\) \| ok 5\/s rejected 6\/s failed 2\/s \| OOM 1 restarts 0/);
  });
});
