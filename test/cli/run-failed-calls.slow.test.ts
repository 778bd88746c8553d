// A real run whose every attestation fails while the agent stays up: the reference agent's k8s
// attestor never finds its callers' pods (the emulated kubelet lists them only after two minutes,
// the agent polls twice). The run is failed, naming the cause from the agent's own log — never a
// weak storm, never a comparison.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunResults } from '../../src/contract/index.js';
import { PROJECT_ROOT } from '../../src/util/index.js';

const dir = mkdtempSync(join(tmpdir(), 'attestorm-failed-calls-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SCENARIO = [
  'name: pods-never-listed',
  'description: every attestation fails, the agent stays up',
  'duration: 4s',
  'warmup: 0s',
  'agent:',
  '  memoryLimit: 256Mi',
  '  attestors: [k8s]',
  '  kubelet: { latency: 20ms, visibilityDelay: 120s }',
  '  k8s: { pollInterval: 100ms, maxPollAttempts: 2 }',
  'load: { pods: 1, workersPerPod: 8, connection: per-call, deadline: 900ms }',
  'variants:',
  '  - { name: off, agent: { placement: disabled } }',
  '',
].join('\n');

describe('attestorm run where every call fails', () => {
  it('is failed (exit 1) with the cause in results.json, the terminal and summary.md', () => {
    const file = join(dir, 'never-listed.yaml');
    writeFileSync(file, SCENARIO);
    const out = join(dir, 'run');
    const r = spawnSync(process.execPath, [join(PROJECT_ROOT, 'bin/attestorm.js'), 'run', file, '--out', out], {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
      timeout: 240_000,
    });
    expect(r.status, r.stderr.slice(-3000)).toBe(1);
    const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as RunResults;
    const v = results.variants[0]!;
    expect(results).toMatchObject({ status: 'complete', verdict: 'failed', judgement: { judged: 1, failed: 1 } });
    expect(v).toMatchObject({ oomKills: 0, restarts: 0, okRps: 0, rejectedRps: 0 });
    expect(v.callCauses!.byCode).toEqual({ UNAVAILABLE: expect.any(Number) });
    expect(v.callCauses!.agentLog[0]!.line).toBe(
      'attestation of pid N failed: k8s attestor: container <id> of pod <uid> not found in kubelet pod list after N attempts',
    );
    const rule = v.expectations.find((e) => e.name === 'stormCalls')!;
    expect(rule).toMatchObject({ verdict: 'failed', actual: 1 });
    expect(rule.message).toMatch(/^every storm call failed with an error while the agent stayed up \(none rejected; at the client: UNAVAILABLE 100%\)/);
    const verdictLine = readFileSync(join(out, 'summary.md'), 'utf8')
      .split('\n')
      .find((l) => l.includes('**Verdict:**'))!;
    expect(verdictLine).toMatch(/^❌ /);
    expect(verdictLine).toContain('Failed calls: off: every storm call failed');
    expect(verdictLine).toContain('not found in kubelet pod list');
    expect(verdictLine).not.toMatch(/too weak|inconclusive/);
    expect(r.stdout + r.stderr).toContain('stormCalls failed: every storm call failed');
  });
});
