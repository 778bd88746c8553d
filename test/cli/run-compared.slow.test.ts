// `attestorm run` of the default scenario's variant that has no rules: the real storm, the real
// agent. Nothing is judged, so nothing passes: exit 0 with verdict compared, and exit 4 when
// --require-expectations asks that something be judged.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunResults } from '../../src/contract/index.js';
import { PROJECT_ROOT } from '../../src/util/index.js';

const dir = mkdtempSync(join(tmpdir(), 'attestorm-compared-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(out: string, ...flags: string[]) {
  const r = spawnSync(
    process.execPath,
    [join(PROJECT_ROOT, 'bin/attestorm.js'), 'run', 'scenarios/quick.yaml', '--variants', 'disabled', '--duration', '4s', '--out', out, ...flags],
    { cwd: PROJECT_ROOT, encoding: 'utf8', timeout: 240_000 },
  );
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, results: JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as RunResults };
}

describe('attestorm run with every rule dropped', () => {
  it('verdict compared, exit 0: no ✅ and no "expectations met" anywhere, the dropped rules named', () => {
    const out = join(dir, 'plain');
    const r = run(out, '--junit', join(dir, 'plain.xml'));
    expect(r.code, r.stderr).toBe(0);
    expect(r.results).toMatchObject({ status: 'complete', verdict: 'compared', passed: false, judgement: { judged: 0 } });
    expect(r.results.judgement!.dropped).toContain('pre-attestation.oomKilled (variant not run)');
    const summary = readFileSync(join(out, 'summary.md'), 'utf8');
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    for (const page of [summary, html, r.stdout, r.stderr]) {
      expect(page).not.toContain('✅');
      expect(page).not.toMatch(/all expectations met/i);
    }
    expect(summary.split('\n').find((l) => l.includes('**Verdict:**'))).toMatch(
      /^ℹ️ \*\*Verdict:\*\* .*Compared, not judged: No expectation was judged; 11 not judged: pre-attestation: [^()]*\boomKilled\b[^()]* \(variant not run\); post-attestation: /,
    );
    expect(r.stdout + r.stderr).toContain('verdict compared:');
    const junit = readFileSync(join(dir, 'plain.xml'), 'utf8');
    expect(junit).toContain('name="quick.not-run"');
    expect(junit).toContain('message="not judged: variant not run"');
  });

  it('--require-expectations: the same run exits 4', () => {
    const r = run(join(dir, 'required'), '--require-expectations', '--no-report');
    expect(r.code, r.stderr).toBe(4);
    expect(r.results.verdict).toBe('compared');
  });
});
