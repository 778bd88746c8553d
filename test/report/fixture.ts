// Test helper: writes a small but realistic run folder (results.json per the contract, samples.ndjson
// with memory/load/metrics/event lines, real encoded HDR histograms) into a temp dir. The placement
// results in results.json are computed from the generated samples, so the two always agree.
// Others may reuse it: `const dir = await writeFixtureRun({ ... })`.
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as hdr from 'hdr-histogram-js';
import {
  applyExpectations,
  RESULTS_SCHEMA_VERSION,
  type ExpectInput,
  type LatencySummary,
  type Outcome,
  type PlacementName,
  type RunResults,
  type SampleLine,
  type VariantResult,
} from '../../src/scenario/index.js';

const MiB = 2 ** 20;

export interface FixturePlacement {
  name: PlacementName;
  /** Memory the agent would reach if nothing stopped it. Above the limit means an OOM kill. */
  peakMiB: number;
  /** Expectations to evaluate against the generated figures. */
  expect?: { oomKilled?: boolean; maxPeakMemoryMiB?: number };
}

export interface FixtureOptions {
  /** Parent folder; default a fresh temp dir. */
  parent?: string;
  /** Run folder name (its label in comparisons). */
  name?: string;
  memoryLimitMiB?: number;
  loadSeconds?: number;
  placements?: FixturePlacement[];
  /** Leave the last samples.ndjson line half-written, as an interrupted run does. */
  truncateLastLine?: boolean;
  /** Failed calls per second while an OOM-killed agent is down (default 300): a real agent's restart can bring thousands. */
  downErrorsPerSecond?: number;
  seed?: number;
}

/** Default: the brief's 320 MiB-ish shape: pre far below, post close to the limit, disabled OOM-killed. */
export const DEFAULT_PLACEMENTS: FixturePlacement[] = [
  { name: 'pre-attestation', peakMiB: 138.4, expect: { oomKilled: false, maxPeakMemoryMiB: 200 } },
  { name: 'post-attestation', peakMiB: 307.5, expect: { oomKilled: false, maxPeakMemoryMiB: 200 } },
  { name: 'disabled', peakMiB: 341.0 },
];

/** Per variant: how the storm looks from outside (calls/s per outcome, latencies in ms, in-flight work). */
const PROFILE: Record<
  PlacementName,
  { ok: number; limited: number; okMs: [number, number]; limitedMs: [number, number]; inflight: number; key: string | null }
> = {
  'pre-attestation': { ok: 40, limited: 820, okMs: [2, 9], limitedMs: [0.1, 0.6], inflight: 4, key: 'pod_uid' },
  'post-attestation': { ok: 40, limited: 610, okMs: [25, 90], limitedMs: [15, 70], inflight: 160, key: 'selector_set' },
  disabled: { ok: 520, limited: 0, okMs: [60, 420], limitedMs: [0, 0], inflight: 310, key: null },
};

function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function newHistogram(): hdr.Histogram {
  return hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: 3 });
}

function summary(h: hdr.Histogram): LatencySummary {
  return {
    count: h.totalCount,
    p50Ms: h.getValueAtPercentile(50) / 1000,
    p90Ms: h.getValueAtPercentile(90) / 1000,
    p99Ms: h.getValueAtPercentile(99) / 1000,
    p999Ms: h.getValueAtPercentile(99.9) / 1000,
    maxMs: h.maxValue / 1000,
  };
}

interface Generated {
  samples: SampleLine[];
  result: VariantResult;
}

function generatePlacement(p: FixturePlacement, limitMiB: number, loadSeconds: number, random: () => number, downErrors = 300): Generated {
  const prof = PROFILE[p.name];
  const samples: SampleLine[] = [];
  const limit = limitMiB * MiB;
  const baseMiB = 38;
  const rampSeconds = loadSeconds * 0.4;
  const willOom = p.peakMiB >= limitMiB;
  // Time at which the unchecked growth would cross the limit.
  const oomAt = willOom ? rampSeconds * ((limitMiB - baseMiB) / (p.peakMiB - baseMiB)) : null;
  const restartDelay = 2;

  samples.push({ kind: 'event', t: -3000, type: 'agent-start' });
  samples.push({ kind: 'event', t: -2500, type: 'agent-ready' });
  samples.push({ kind: 'event', t: -2000, type: 'warmup-start' });
  samples.push({ kind: 'event', t: 0, type: 'load-start' });

  let peak = 0;
  let oomKills = 0;
  let restarts = 0;
  let downUntil = -Infinity;
  for (let t = -2000; t <= loadSeconds * 1000; t += 100) {
    const s = t / 1000;
    let mib: number;
    if (oomAt !== null && s >= oomAt && oomKills === 0) {
      // The kernel kills at the limit: the last sample before the kill shows usage and peak there.
      peak = limit;
      samples.push({
        kind: 'memory',
        t: t - 1,
        usageBytes: limit,
        workingSetBytes: limit,
        rssBytes: Math.round(limit * 0.9),
        peakBytes: limit,
        limitBytes: limit,
        cpuSeconds: s * 0.8,
      });
      samples.push({ kind: 'event', t, type: 'oom-kill', detail: `memory.events oom_kill 1 at ${limitMiB} MiB` });
      samples.push({ kind: 'event', t: t + 10, type: 'agent-exit', detail: 'signal SIGKILL' });
      samples.push({ kind: 'event', t: t + restartDelay * 1000, type: 'agent-restart' });
      oomKills++;
      restarts++;
      downUntil = s + restartDelay;
    }
    if (s < 0) mib = baseMiB * (0.6 + 0.4 * ((s + 2) / 2));
    else if (s < downUntil)
      continue; // no agent, no memory samples
    else {
      const since = oomKills > 0 ? s - downUntil : s;
      const target = oomKills > 0 ? Math.min(p.peakMiB, limitMiB * 0.97) : p.peakMiB;
      const grow = Math.min(1, since / rampSeconds);
      mib = baseMiB + (target - baseMiB) * grow * (0.96 + 0.04 * random());
    }
    const usage = Math.min(Math.round(mib * MiB), limit);
    peak = Math.max(peak, usage);
    samples.push({
      kind: 'memory',
      t,
      usageBytes: usage,
      workingSetBytes: usage,
      rssBytes: Math.round(usage * 0.9),
      peakBytes: peak,
      limitBytes: limit,
      cpuSeconds: Math.max(0, s + 2) * 0.8,
    });
  }

  const totals = { ok: newHistogram(), rateLimited: newHistogram(), error: newHistogram() };
  const counts = { ok: 0, rateLimited: 0, error: 0, deadlineExceeded: 0 };
  let rejected = 0;
  let peakInflight = 0;
  for (let sec = 0; sec < loadSeconds; sec++) {
    const t = (sec + 1) * 1000;
    const down = sec + 1 > downUntil - restartDelay && sec < downUntil;
    const jitter = () => 0.9 + 0.2 * random();
    const ok = down ? 0 : Math.round(prof.ok * jitter());
    const limited = down ? 0 : Math.round(prof.limited * jitter());
    const error = down ? Math.round(downErrors * jitter()) : 0;
    const per: Partial<Record<Outcome, string>> = {};
    const record = (outcome: 'ok' | 'rateLimited' | 'error', n: number, [lo, hi]: [number, number]) => {
      if (n === 0) return;
      const h = newHistogram();
      for (let i = 0; i < n; i++) {
        // Skewed towards the low end with a long tail, as service latencies are.
        const ms = lo + (hi - lo) * random() ** 3;
        h.recordValue(Math.max(1, Math.round(ms * 1000)));
      }
      per[outcome] = hdr.encodeIntoCompressedBase64(h);
      totals[outcome].add(h);
      h.destroy();
    };
    record('ok', ok, prof.okMs);
    record('rateLimited', limited, prof.limitedMs);
    record('error', error, [0.2, 1.5]);
    counts.ok += ok;
    counts.rateLimited += limited;
    counts.error += error;
    const byCode: Record<string, number> = {};
    if (ok) byCode['OK'] = ok;
    if (limited) byCode[p.name === 'pre-attestation' ? 'RESOURCE_EXHAUSTED' : 'UNAVAILABLE'] = limited;
    if (error) byCode['UNAVAILABLE'] = (byCode['UNAVAILABLE'] ?? 0) + error;
    samples.push({
      kind: 'load',
      t,
      ok,
      rateLimited: limited,
      deadlineExceeded: 0,
      error,
      byCode,
      histograms: per,
      pods: {
        'storm-0': { ok: Math.round(ok / 2), rateLimited: Math.round(limited / 2), error: Math.round(error / 2) },
        'storm-1': { ok: ok - Math.round(ok / 2), rateLimited: limited - Math.round(limited / 2), error: error - Math.round(error / 2) },
      },
    });
    rejected += limited;
    const inflight = down ? 0 : Math.round(prof.inflight * Math.min(1, (sec + 1) / rampSeconds) * jitter());
    peakInflight = Math.max(peakInflight, inflight);
    samples.push({
      kind: 'metrics',
      t: t + 50,
      inflightAttestations: inflight,
      openConnections: down ? 0 : inflight + 12,
      rejectedByKeyType: prof.key ? { [prof.key]: rejected } : {},
      kubeletFetches: sec * 2,
    });
  }
  samples.push({ kind: 'event', t: loadSeconds * 1000, type: 'load-end' });
  samples.sort((a, b) => a.t - b.t);

  const latency: Partial<Record<Outcome, LatencySummary>> = {};
  for (const [outcome, h] of Object.entries(totals) as [Outcome, hdr.Histogram][]) {
    if (h.totalCount > 0) latency[outcome] = summary(h);
    h.destroy();
  }
  const result: VariantResult = {
    name: p.name,
    agent: { kind: 'reference', placement: p.name, key: p.name === 'pre-attestation' ? 'pod-uid' : p.name === 'post-attestation' ? 'selector-set' : null },
    runDirs: [`${p.name}.r1`],
    memoryLimitBytes: limit,
    peakMemoryBytes: peak,
    memoryMeasure: 'working-set',
    peaks: { workingSetBytes: peak, usageBytes: peak, rssBytes: null },
    oomKills,
    restarts,
    downtimeSeconds: oomKills * restartDelay,
    okRps: counts.ok / loadSeconds,
    rejectedRps: counts.rateLimited / loadSeconds,
    errorRps: counts.error / loadSeconds,
    deadlineExceededRps: 0,
    spread: {},
    deaths: [],
    latency,
    peakInflightAttestations: peakInflight,
    rejectionsByKeyType: prof.key ? { [prof.key]: rejected } : {},
    workerMemoryBytes: 9 * MiB,
    expectations: [],
    verdict: 'passed',
    passed: true,
  };
  return { samples, result };
}

/** Writes the run folder and returns its path. */
export async function writeFixtureRun(opts: FixtureOptions = {}): Promise<string> {
  const parent = opts.parent ?? (await mkdtemp(path.join(tmpdir(), 'attestorm-report-')));
  const dir = path.join(parent, opts.name ?? 'fixture-run');
  const limitMiB = opts.memoryLimitMiB ?? 320;
  const loadSeconds = opts.loadSeconds ?? 30;
  const random = rng(opts.seed ?? 42);
  const placements: VariantResult[] = [];
  const expect: Record<string, ExpectInput> = {};
  for (const p of opts.placements ?? DEFAULT_PLACEMENTS) {
    const { samples, result } = generatePlacement(p, limitMiB, loadSeconds, random, opts.downErrorsPerSecond);
    const repDir = path.join(dir, result.runDirs[0]!);
    await mkdir(repDir, { recursive: true });
    let text = samples.map((s) => JSON.stringify(s)).join('\n') + '\n';
    if (opts.truncateLastLine) text = text.slice(0, text.length - 25);
    await writeFile(path.join(repDir, 'samples.ndjson'), text);
    await writeFile(path.join(repDir, 'agent.log'), 'agent: listening\n');
    placements.push(result);
    // The product's own rules judge the fixture, so the messages are the ones it emits.
    if (p.expect) {
      expect[p.name] = {
        ...(p.expect.oomKilled !== undefined ? { oomKilled: p.expect.oomKilled } : {}),
        ...(p.expect.maxPeakMemoryMiB !== undefined ? { maxPeakMemory: `${p.expect.maxPeakMemoryMiB}Mi` } : {}),
      };
    }
  }
  const verdict = applyExpectations(placements, expect);
  const resolved = {
    name: 'storm-fixture',
    agent: { memoryLimit: `${limitMiB}Mi`, rateLimit: { fetch_jwt_svid: 10 } },
    load: { pods: 4, workersPerPod: 100, method: 'FetchJWTSVID', connection: 'per-call', duration: `${loadSeconds}s` },
    variants: placements.map((p) => ({ name: p.name, agent: { kind: 'reference', placement: p.name } })),
  };
  const results: RunResults = {
    schemaVersion: RESULTS_SCHEMA_VERSION,
    tool: { name: 'attestorm', version: '0.1.0' },
    scenario: {
      name: 'storm-fixture',
      description: 'Fixture: 4 pods × 100 forked workers, a fresh connection per FetchJWTSVID call <with markup & "quotes">',
      file: 'scenarios/storm-fixture.yaml',
      resolved,
      modeledCosts: { attestationWorkingSet: '256Ki' },
    },
    command: `attestorm run scenarios/storm-fixture.yaml --memory-limit ${limitMiB}Mi`,
    environment: {
      cgroupVersion: 'v2',
      oomFidelity: 'cgroup-oom',
      podFidelity: 'cgroup-pods',
      cpuShare: 'cpu-weight',
      nodeVersion: 'v20.19.0',
      platform: 'linux',
      cpus: 2,
      memoryBytes: 24 * 2 ** 30,
      hostname: 'fixture-host',
    },
    startedAt: '2026-11-29T20:00:00.000Z',
    endedAt: '2026-11-29T20:02:00.000Z',
    runner: { pid: process.pid, hostname: 'fixture-host', startTicks: null },
    status: 'complete',
    variants: placements,
    droppedExpectations: [],
    verdict,
    passed: placements.every((p) => p.passed),
  };
  await writeFile(path.join(dir, 'results.json'), JSON.stringify(results, null, 2));
  await writeFile(path.join(dir, 'scenario.yaml'), 'name: storm-fixture\n');
  return dir;
}
