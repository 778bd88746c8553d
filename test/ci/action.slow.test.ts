// action.yml's run step, run for real on this machine's cgroups (root): a short storm of one variant,
// the verdict output equal to the run's results.json, the run folder, JUnit file and job summary
// where the inputs said, and the pull-request comment written from that folder.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectCgroupHost } from '../../src/cgroup/index.js';
import { runActionStep } from '../support/action-steps.js';
import { skipNote } from '../support/skip-note.js';

const { host, reason } = detectCgroupHost();
const skipReason = process.geteuid?.() !== 0 ? 'the run step runs attestorm through sudo unless root' : !host ? reason : null;
if (skipReason) skipNote('action.slow.test.ts (action.yml running a storm)', skipReason);

const work = mkdtempSync(join(tmpdir(), 'attestorm-action-run-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe.skipIf(skipReason !== null)('action.yml: the run step, running a storm', () => {
  it('sets verdict from results.json and run-dir, writes the JUnit file and the job summary', () => {
    writeFileSync(
      join(work, 'tiny.yaml'),
      [
        'name: tiny',
        'placements: [pre-attestation]',
        'duration: 3s',
        'agent: { memoryLimit: 256Mi, rateLimits: { fetch_jwt_svid: 10 } }',
        'load: { pods: 1, workersPerPod: 4, connection: per-call }',
        'expect: { pre-attestation: { oomKilled: false } }',
        '',
      ].join('\n'),
    );
    const summary = join(work, 'summary.md');
    writeFileSync(summary, '');
    const r = runActionStep(
      'Run the scenario',
      { scenario: 'tiny.yaml', duration: '2s', junit: 'junit.xml', 'fail-on-inconclusive': 'true', out: 'run' },
      { cwd: work, env: { GITHUB_STEP_SUMMARY: summary }, timeout: 240_000 },
    );
    const results = JSON.parse(readFileSync(join(work, 'run', 'results.json'), 'utf8')) as {
      verdict: string;
      status: string;
      scenario: { resolved: { duration: number } };
    };
    expect(r.status, r.stderr.slice(-3000)).toBe(results.verdict === 'passed' ? 0 : 1);
    expect(results.status).toBe('complete');
    expect(results.scenario.resolved.duration).toBe(2000);
    expect(r.outputs).toEqual({ 'run-dir': join(work, 'run'), verdict: results.verdict });
    expect(readFileSync(join(work, 'junit.xml'), 'utf8')).toContain('<testsuite');
    expect(readFileSync(summary, 'utf8')).toContain('tiny');
    // The comment step, as the runner's user, on the folder the run handed back.
    const comment = runActionStep('Write the pull-request comment', {}, { cwd: work, stepOutputs: { 'run.outputs.run-dir': r.outputs['run-dir']! } });
    expect(comment.status, comment.stderr).toBe(0);
    expect(readFileSync(comment.outputs['comment-file']!, 'utf8')).toMatch(/^<!-- attestorm-comment scenario=tiny -->\n### .* — attestorm tiny\n/);
  });
});
