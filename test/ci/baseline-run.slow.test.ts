// `attestorm run --baseline` end to end through the real runner: a tiny storm (1 pod × 2 workers,
// 2 s) run twice, the second against a stricter copy of the first (its peak memory halved): exit 1,
// a JUnit failure, the job summary and results.json `baseline`; against the first itself it passes.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareRunFolders, parseTolerances, type BaselineComparison } from '../../src/ci/index.js';
import { detectCgroupHost } from '../../src/cgroup/index.js';
import { RESULTS_SCHEMA_VERSION } from '../../src/contract/index.js';
import { findAll, parseXml } from './xml.js';
import { skipNote } from '../support/skip-note.js';

const CLI = path.resolve(import.meta.dirname, '../../bin/attestorm.js');
const { host, reason } = detectCgroupHost();
if (!host) skipNote('every test of baseline-run.slow.test.ts', reason);

const SCENARIO = `name: tiny-ci
description: A tiny storm for the CI baseline gate test.
duration: 2s
warmup: 1s
placements: [pre-attestation]
agent:
  memoryLimit: 128Mi
  attestors: [unix]
  startTimeout: 30s
load:
  pods: 1
  workersPerPod: 2
  deadline: 200ms
  methods: { FetchJWTSVID: 1 }
expect:
  pre-attestation:
    oomKilled: false
`;

async function attestorm(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI, ...args], { timeout: 50_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe.skipIf(!host)(`run --baseline end to end (${reason})`, () => {
  let tmp: string;
  let scenario: string;
  let first: { code: number; stderr: string };
  let schemaVersion: unknown;
  beforeAll(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), 'attestorm-ci-run-'));
    scenario = path.join(tmp, 'tiny.yaml');
    await writeFile(scenario, SCENARIO);
    first = await attestorm(['run', scenario, '--out', path.join(tmp, 'a'), '--no-report']);
    schemaVersion =
      first.code === 0 ? (JSON.parse(await readFile(path.join(tmp, 'a', 'results.json'), 'utf8')) as { schemaVersion: unknown }).schemaVersion : null;
  }, 60_000);
  afterAll(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('fails against a stricter copy of the first run and passes against the first', async () => {
    expect(first.code, first.stderr).toBe(0);
    // The gate reads the schema the runner writes: a runner writing another one is a defect, not a reason to skip.
    expect(schemaVersion).toBe(RESULTS_SCHEMA_VERSION);

    // A stricter copy: the same run with its peak memory halved. Every other figure gets a tolerance
    // no rerun exceeds (latencies of a run on a busy machine triple easily): only the peak regresses.
    const a = JSON.parse(await readFile(path.join(tmp, 'a', 'results.json'), 'utf8')) as {
      variants: { peakMemoryBytes: number; spread: { peakMemoryBytes?: Record<string, number> } }[];
    };
    for (const v of a.variants) {
      v.peakMemoryBytes = Math.round(v.peakMemoryBytes / 2);
      for (const k of ['min', 'median', 'max']) if (v.spread.peakMemoryBytes) v.spread.peakMemoryBytes[k] = Math.round(v.spread.peakMemoryBytes[k]! / 2);
    }
    await mkdir(path.join(tmp, 'strict'));
    await writeFile(path.join(tmp, 'strict', 'results.json'), JSON.stringify(a));

    const junit = path.join(tmp, 'junit.xml');
    const summary = path.join(tmp, 'summary.md');
    const strict = await attestorm([
      'run',
      scenario,
      '--out',
      path.join(tmp, 'c'),
      '--no-report',
      '--baseline',
      path.join(tmp, 'strict', 'results.json'),
      '--tolerance',
      '10000%,peakMemory=10%,restarts=5',
      '--junit',
      junit,
      '--step-summary',
      summary,
    ]);
    expect(strict.code, strict.stderr).toBe(1);
    expect(strict.stderr).toMatch(/\| pre-attestation \| peak memory +\|.*\| REGRESSED +\| new [\d.]+ MiB > baseline [\d.]+ MiB \+ 10%/);

    const c = JSON.parse(await readFile(path.join(tmp, 'c', 'results.json'), 'utf8')) as { baseline: BaselineComparison; verdict: string };
    expect(c.verdict).toBe('passed');
    expect(c.baseline.figures.find((f) => f.figure === 'peakMemory')!.verdict).toBe('regressed');
    expect(c.baseline.figures.filter((f) => f.verdict === 'regressed').map((f) => `${f.variant} ${f.figure}: ${f.rule}`)).toEqual([
      expect.stringMatching(/^pre-attestation peakMemory: /),
    ]);

    const doc = parseXml(await readFile(junit, 'utf8'));
    expect(findAll(doc, 'failure').map((f) => f.attrs['type'])).toEqual(['baseline-regression']);
    expect(findAll(doc, 'testcase').map((t) => t.attrs['name'])).toContain('expectation oomKilled');
    expect(await readFile(summary, 'utf8')).toContain('### ❌ failed — attestorm tiny-ci');

    // The same second run against the real first one, with wide tolerances, passes (rates and p99 of a
    // 2 s storm move by 50–250% run to run on a shared machine; memory by a few percent).
    const loose = compareRunFolders([path.join(tmp, 'a'), path.join(tmp, 'c')], parseTolerances(['1000%', 'restarts=5', 'oomKills=1']));
    expect(loose.comparisons[0]!.comparison!.regressed, loose.text).toBe(0);
  }, 120_000);
});
