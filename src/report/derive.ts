// From loaded run folders to everything a report shows: table, verdict, latency, rejections, series
// and, with several runs, the deltas against the first.
import type { LoadedRun } from './load-run.js';
import type { LatencyBar, RejectionsByKey, ReportData, RunReport } from './report-model.js';
import { deriveRows, deriveVerdict } from './derive-table.js';
import { deriveSeries, rejectionsFromSamples } from './derive-series.js';
import { deriveComparison } from './derive-compare.js';
import { latencyFromSamples } from './latency.js';
import { fetchRows, fetchTimelines } from './kubelet-fetches.js';
import { repetitionsOf } from './repetitions.js';
import { runDifferences, spreadRows, variantDifferences } from './spread.js';
import { runMemoryMeasure, type LatencySummary, type Outcome, type RunResults, type SampleLine } from '../contract/index.js';

export function deriveReport(runs: LoadedRun[]): ReportData {
  const reports = runs.map((r, i) => deriveRun(r, i));
  return {
    runs: reports,
    comparison: reports.length > 1 ? deriveComparison(reports) : null,
    runDifferences: reports.length > 1 ? runDifferences(reports.map((r) => r.repetitions)) : null,
    series: deriveSeries(runs),
  };
}

/** One run's report; `runIndex` is its place among the runs compared (0 alone). */
export function deriveRun(run: LoadedRun, runIndex = 0): RunReport {
  const { results } = run;
  const rows = deriveRows(run.label, results);
  const repetitions = results.variants
    .filter((v) => !v.error || v.runDirs.length > 0)
    .map((v) => ({ run: run.label, variant: v.name, reps: repetitionsOf(v, run.samples) }));
  const latency: LatencyBar[] = [];
  const rejections: RejectionsByKey[] = [];
  for (const p of results.variants) {
    const sampleLists: SampleLine[][] = p.runDirs.map((d) => run.samples.get(d) ?? []);
    let summaries: Partial<Record<Outcome, LatencySummary>> = p.latency ?? {};
    let source: LatencyBar['source'] = 'results';
    if (Object.keys(summaries).length === 0) {
      summaries = latencyFromSamples(sampleLists);
      source = 'samples';
    }
    for (const [outcome, s] of Object.entries(summaries) as [Outcome, LatencySummary][]) {
      latency.push({ run: run.label, variant: p.name, outcome, ...s, source });
    }
    const byKeyType = Object.keys(p.rejectionsByKeyType ?? {}).length > 0 ? { ...p.rejectionsByKeyType } : rejectionsFromSamples(sampleLists);
    rejections.push({ run: run.label, variant: p.name, byKeyType });
  }
  return {
    label: run.label,
    dir: run.dir,
    status: results.status,
    scenarioName: results.scenario?.name ?? '(unnamed)',
    scenarioDescription: results.scenario?.description ?? '',
    scenarioFile: results.scenario?.file ?? null,
    scenarioResolved: results.scenario?.resolved ?? null,
    scenarioWritten: results.scenario?.written ?? null,
    modeledCosts: results.scenario?.modeledCosts ?? {},
    command: results.command ?? '',
    environment: { ...(platformFact(results.platform) ? { cluster: platformFact(results.platform) } : {}), ...(results.environment ?? {}) },
    startedAt: results.startedAt,
    endedAt: results.endedAt,
    tool: `${results.tool?.name ?? 'attestorm'} ${results.tool?.version ?? ''}`.trim(),
    memoryMeasure: runMemoryMeasure(results),
    rows,
    verdict: deriveVerdict(rows, results),
    latency,
    rejections,
    warnings: [...run.warnings],
    faults: results.variants.flatMap((v) =>
      (v.faults ?? []).map((f) => ({
        variant: v.name,
        rep: f.rep,
        action: f.action,
        atSeconds: f.atMs / 1000,
        forSeconds: f.forMs === null ? null : f.forMs / 1000,
        agentReadyMs: f.recovery.agentReadyMs,
        bystanderOkMs: f.recovery.bystanderOkMs,
        callsLost: f.recovery.callsLost,
        detail: f.detail,
        error: f.error ?? null,
      })),
    ),
    heap: results.variants.flatMap((v) =>
      (v.spireHeap ?? []).map((h) => ({ variant: v.name, rep: h.rep, reps: v.spireHeap!.length, profiles: h.profiles, largest: h.largest, last: h.last })),
    ),
    clusterNodes: results.variants.flatMap((v) => (v.cluster ?? []).map((c) => ({ variant: v.name, ...c }))),
    repetitions,
    spread: spreadRows(repetitions),
    differences: variantDifferences(repetitions),
    mergedFrom: run.mergedFrom ?? null,
    mergeNotes: run.mergeNotes ?? [],
    kubeletFetches: fetchRows(run),
    fetchTimelines: fetchTimelines(run, runIndex),
    goroutines: results.variants.flatMap((v) =>
      (v.spireGoroutines ?? []).map((g) => ({
        variant: v.name,
        rep: g.rep,
        reps: v.spireGoroutines!.length,
        profiles: g.profiles,
        largest: g.largest,
        last: g.last,
      })),
    ),
  };
}

/** Where a cluster run ran, in words: kind or another cluster, its name, node image and Kubernetes version; null for local runs. */
export function platformFact(p: RunResults['platform']): string | null {
  if (!p || p.name === 'local') return null;
  const d = p.detail ?? {};
  const nodes = Array.isArray(d['nodes']) ? d['nodes'].length : null;
  const parts = [
    typeof d['nodeImage'] === 'string' ? `node image ${d['nodeImage']}` : null,
    typeof d['serverVersion'] === 'string' ? `Kubernetes ${d['serverVersion']}` : null,
    nodes !== null ? `${nodes} node${nodes === 1 ? '' : 's'}` : null,
  ].filter((x): x is string => x !== null);
  const name = typeof d['cluster'] === 'string' ? ` ${d['cluster']}` : '';
  return `${p.name}${name}${parts.length ? `: ${parts.join(', ')}` : ''}`;
}
