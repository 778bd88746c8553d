// results.json fixtures in the v2 contract (variants, spreads, verdicts), built field by field so a
// test can make a copy stricter, slower or from another scenario.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ExpectationResult, RunResults, VariantResult } from '../../src/contract/index.js';

const MiB = 2 ** 20;

export interface VariantSpec {
  name: string;
  peakMiB: number | [number, number, number];
  oomKills?: number;
  restarts?: number;
  okRps?: number | [number, number, number];
  rejectedRps?: number;
  p99Ms?: number;
  reps?: number;
  version?: string;
  bystanders?: { successRatio: number; longestGapMs: number };
  expectations?: ExpectationResult[];
  error?: string;
}

const range = (x: number | [number, number, number]) => (Array.isArray(x) ? { min: x[0], median: x[1], max: x[2] } : { min: x, median: x, max: x });

export function variant(s: VariantSpec): VariantResult {
  const reps = s.reps ?? 1;
  const peak = range(s.peakMiB);
  const ok = range(s.okRps ?? 500);
  const expectations = s.expectations ?? [];
  const verdict = expectations.some((e) => e.verdict === 'failed')
    ? 'failed'
    : expectations.some((e) => e.verdict === 'inconclusive')
      ? 'inconclusive'
      : 'passed';
  const v: VariantResult = {
    name: s.name,
    agent: { kind: 'reference', placement: 'pre-attestation', key: 'pod-uid', binary: 'src/scenario/agent-entry.ts', version: s.version ?? '0.1.0' },
    runDirs: Array.from({ length: reps }, (_, i) => `${s.name}.r${i + 1}`),
    memoryLimitBytes: 128 * MiB,
    peakMemoryBytes: peak.median * MiB,
    memoryMeasure: 'working-set',
    peaks: { workingSetBytes: peak.median * MiB, usageBytes: null, rssBytes: null },
    oomKills: s.oomKills ?? 0,
    restarts: s.restarts ?? 0,
    downtimeSeconds: 0,
    okRps: ok.median,
    rejectedRps: s.rejectedRps ?? 50,
    errorRps: 0,
    deadlineExceededRps: 0,
    spread: {
      peakMemoryBytes: { min: peak.min * MiB, median: peak.median * MiB, max: peak.max * MiB },
      okRps: ok,
      oomKills: range(s.oomKills ?? 0),
      restarts: range(s.restarts ?? 0),
      rejectedRps: range(s.rejectedRps ?? 50),
    },
    deaths: [],
    latency: { ok: { count: 1000, p50Ms: 2, p90Ms: 5, p99Ms: s.p99Ms ?? 20, p999Ms: 40, maxMs: 50 } },
    peakInflightAttestations: 10,
    rejectionsByKeyType: {},
    workerMemoryBytes: null,
    expectations,
    verdict,
    passed: verdict !== 'failed',
    ...(s.error !== undefined ? { error: s.error } : {}),
  };
  if (s.bystanders) {
    (v as unknown as Record<string, unknown>)['bystanders'] = {
      calls: 100,
      ok: Math.round(s.bystanders.successRatio * 100),
      successRatio: s.bystanders.successRatio,
      p50Ms: 3,
      p99Ms: 30,
      longestGapMs: s.bystanders.longestGapMs,
      byStatus: { OK: 100 },
    };
  }
  return v;
}

export function results(opts: {
  scenario?: string;
  variants: VariantSpec[];
  startedAt?: string;
  commit?: string;
  toolVersion?: string;
  duration?: string;
}): RunResults {
  const variants = opts.variants.map(variant);
  const verdict = variants.some((v) => v.verdict === 'failed') ? 'failed' : variants.some((v) => v.verdict === 'inconclusive') ? 'inconclusive' : 'passed';
  const startedAt = opts.startedAt ?? '2026-11-30T02:00:00.000Z';
  const r: RunResults = {
    schemaVersion: 3,
    tool: { name: 'attestorm', version: opts.toolVersion ?? '0.1.0' },
    scenario: {
      name: opts.scenario ?? 'quick',
      description: 'fixture',
      file: 'scenarios/quick.yaml',
      resolved: { name: opts.scenario ?? 'quick', load: { duration: opts.duration ?? '30s' } },
      modeledCosts: {},
    },
    command: 'attestorm run scenarios/quick.yaml',
    environment: {
      cgroupVersion: 'v1',
      oomFidelity: 'cgroup-oom',
      podFidelity: 'cgroup-pods',
      cpuShare: 'none',
      nodeVersion: 'v20',
      platform: 'linux',
      cpus: 2,
      memoryBytes: 8 * 2 ** 30,
      hostname: 'ci',
    },
    runner: { pid: 1, hostname: 'ci', startTicks: null },
    startedAt,
    endedAt: new Date(Date.parse(startedAt) + 60_000).toISOString(),
    status: 'complete',
    variants,
    droppedExpectations: [],
    verdict,
    passed: verdict !== 'failed',
  };
  if (opts.commit)
    (r as unknown as Record<string, unknown>)['provenance'] = {
      git: { commit: opts.commit, dirty: false, branch: 'main' },
      tool: r.tool,
      scenarioHash: 'sha256:00',
      machine: {},
      ci: null,
    };
  return r;
}

export function expectation(name: string, verdict: ExpectationResult['verdict'], message: string): ExpectationResult {
  return { name, expected: 'x', actual: 'y', verdict, basis: verdict === 'inconclusive' ? 'bound' : 'measured', message };
}

export async function writeRunFolder(parent: string, name: string, r: RunResults): Promise<string> {
  const dir = path.join(parent, name);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'results.json'), `${JSON.stringify(r, null, 2)}\n`);
  return dir;
}
