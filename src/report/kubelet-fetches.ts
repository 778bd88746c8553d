// The kubelet's fetch schedule as a report shows it: per variant the /pods figures (rate with its
// spread, answer times, bytes, concurrency), and per variant's first repetition the timeline of
// fetches (arrival to last byte) beside what waited on them — the reference agent's attestations in
// flight, SPIRE's open Workload API connections and its goroutines waiting for a pod list.
import type { KubeletFetchRecord, SampleLine, VariantResult } from '../contract/index.js';
import { kubeletFetchRecord } from '../scenario/index.js';
import type { LoadedRun } from './load-run.js';
import type { FetchRow, FetchTimeline } from './report-model.js';

/** One variant's /pods figures in a run. */
/** Lines a fetch timeline draws at most; beyond, the first ones, and the chart says so. */
export const MAX_FETCH_BARS = 3000;

function fetchLines(samples: readonly SampleLine[]) {
  return {
    single: samples.filter((s) => s.kind === 'kubelet-fetch'),
    folded: samples.filter((s) => s.kind === 'kubelet-fetches'),
  };
}

/** A variant's figures from its repetitions' samples, for folders whose results.json lacks them; null without fetch lines. */
function figuresFromSamples(run: LoadedRun, v: VariantResult): KubeletFetchRecord | null {
  const reps = v.runDirs.map((d) => {
    const samples = run.samples.get(d) ?? [];
    const load = samples.filter((s) => s.kind === 'load');
    if (load.length === 0) return undefined;
    const from = Math.min(...load.map((s) => s.t));
    const to = Math.max(...load.map((s) => s.t)) + 1000;
    const { single, folded } = fetchLines(samples);
    if (single.length === 0 && folded.length === 0) return undefined;
    const inWindow = single.filter((s) => s.t >= from && s.t <= to);
    return {
      requests: inWindow.length,
      seconds: (to - from) / 1000,
      answered: inWindow.filter((s) => s.answerEnd !== null).length,
      byStatus: countBy(inWindow.map((s) => (s.status === null ? 'none' : String(s.status)))),
      abandoned: inWindow.filter((s) => s.abandoned).length,
      bytes: inWindow.reduce((n, s) => n + s.bytes, 0),
      maxInFlight: inWindow.reduce((n, s) => Math.max(n, s.inFlight), 0),
      maxQueueWaitMs: inWindow.reduce((n, s) => Math.max(n, s.queueWaitMs), 0),
      answerHistogram: '',
      aggregated: folded.reduce((n, f) => n + f.requests, 0),
    };
  });
  const record = kubeletFetchRecord(reps);
  if (!record) return null;
  const answers = v.runDirs.flatMap((d) => fetchLines(run.samples.get(d) ?? []).single.flatMap((s) => (s.answerEnd === null ? [] : [s.answerEnd - s.t])));
  return { ...record, answerMs: quantiles(answers) };
}

function countBy(keys: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of keys) out[k] = (out[k] ?? 0) + 1;
  return out;
}

function quantiles(xs: number[]): { p50: number; p95: number; max: number } | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
  return { p50: at(0.5), p95: at(0.95), max: s[s.length - 1]! };
}

export function fetchRows(run: LoadedRun): FetchRow[] {
  return run.results.variants.flatMap((v): FetchRow[] => {
    if (v.kubeletFetches) return [{ run: run.label, variant: v.name, source: 'results', ...v.kubeletFetches }];
    const fromSamples = figuresFromSamples(run, v);
    return fromSamples ? [{ run: run.label, variant: v.name, source: 'samples', ...fromSamples }] : [];
  });
}

/** What waited on the kubelet in one repetition, from its metrics lines and (SPIRE) its goroutine profiles. */
function waitingLines(samples: readonly SampleLine[], v: VariantResult, rep: number): FetchTimeline['waiting'] {
  const metrics = samples.filter((s) => s.kind === 'metrics');
  const line = (label: string, pick: (m: (typeof metrics)[number]) => number | null) => {
    const points = metrics.map((m) => ({ x: m.t / 1000, y: pick(m) })).filter((p) => p.y !== null);
    return points.length ? [{ label, points }] : [];
  };
  const goroutines = v.spireGoroutines?.find((g) => g.rep === rep)?.series ?? [];
  const fromProfiles = (label: string, owners: ('pod-list-wait' | 'kubelet-fetch')[]) =>
    goroutines.length ? [{ label, points: goroutines.map((g) => ({ x: g.atMs / 1000, y: owners.reduce((n, o) => n + g.byOwner[o], 0) })) }] : [];
  return [
    ...line('attestations in flight', (m) => m.inflightAttestations),
    ...line('open Workload API connections', (m) => (v.agent.kind === 'spire' ? m.openConnections : null)),
    ...fromProfiles('goroutines waiting for a pod list', ['pod-list-wait']),
    ...fromProfiles('goroutines fetching from the kubelet', ['kubelet-fetch']),
  ];
}

export function fetchTimelines(run: LoadedRun, runIndex: number): FetchTimeline[] {
  return run.results.variants.flatMap((v) => {
    const i = v.runDirs.findIndex((d) => (run.samples.get(d) ?? []).some((s) => s.kind === 'kubelet-fetch' || s.kind === 'kubelet-fetches'));
    if (i < 0) return [];
    const samples = run.samples.get(v.runDirs[i]!) ?? [];
    const { single, folded } = fetchLines(samples);
    const rep = Number(/\.r(\d+)$/.exec(v.runDirs[i]!)?.[1] ?? i + 1);
    return [
      {
        run: run.label,
        runIndex,
        variant: v.name,
        rep,
        reps: v.runDirs.length,
        fetches: single.map((s) => ({ start: s.t / 1000, end: s.answerEnd === null ? null : s.answerEnd / 1000, status: s.status, conn: s.conn })),
        folded: folded.map((f) => ({ t: f.t / 1000, requests: f.requests })),
        waiting: waitingLines(samples, v, rep),
      },
    ];
  });
}
