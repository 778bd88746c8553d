// The derived view of one or more run folders: everything a report shows, computed once and then
// rendered as HTML, Markdown, PNG and JSON. Nothing here is measured; it is all read or computed
// from the run folder.
import type {
  ClusterNodesRecord,
  LoadClientRecord,
  MemoryMeasure,
  Outcome,
  Phase,
  RunVerdict,
  JudgementRecord,
  KubeletFetchRecord,
  MemoryPressureRecord,
  SpireGoroutineProfileSummary,
  SpireHeapProfileSummary,
  VariantAgentRecord,
  WorkingSetParts,
} from '../contract/index.js';

/** A variant's name (the placements shorthand names variants after placements). */
type VariantName = string;

export type ReportFormat = 'html' | 'md' | 'png' | 'json';
export const REPORT_FORMATS: readonly ReportFormat[] = ['html', 'md', 'png', 'json'];

/** One row of the comparison table, in the brief's shape. */
export interface TableRow {
  run: string;
  variant: VariantName;
  /** Survived, but held at its limit: the worst repetition's figures in words (null: clear of it, killed, or unmeasured). */
  atLimit: string | null;
  /** The repetition that spent most of its storm near the limit (null: no memory readings, older folders). */
  nearLimit: MemoryPressureRecord | null;
  agent: VariantAgentRecord;
  memoryLimitMiB: number | null;
  /** The measure of peakMemoryMiB, its range and percentage. */
  memoryMeasure: MemoryMeasure;
  /** null: unmeasured (nothing could read the agent's memory). */
  peakMemoryMiB: number | null;
  /** The peak of cgroup usage (the kernel's high-water mark), beside a measure that is not usage; null otherwise or unmeasured. */
  peakUsageMiB: number | null;
  /** min–max of the peak across repetitions, when there were several. */
  peakRangeMiB: { min: number; max: number } | null;
  /** What the working set held at its highest reading (RSS, kernel, file pages); null: not read. */
  workingSetParts: WorkingSetParts | null;
  /** Repetitions measured. */
  repetitions: number;
  /** Phases in which the agent died (OOM kills and other deaths), in order. */
  deathPhases: Phase[];
  /** Peak as a percentage of the limit; null when the run had no limit. */
  peakPercentOfLimit: number | null;
  oomKills: number;
  restarts: number;
  downtimeSeconds: number;
  okRps: number;
  rejectedRps: number;
  errorRps: number;
  deadlineExceededRps: number;
  okP50Ms: number | null;
  okP99Ms: number | null;
  peakInflightAttestations: number | null;
  /** The agent's own gauge of open Workload API connections at its highest (SPIRE); null where it reports none. */
  peakOpenConnections: number | null;
  /** Calls the workers started / the agent answered, per second; null in older run folders. */
  offeredRps: number | null;
  deliveredRps: number | null;
  generatorCpuShare: number | null;
  stormShrank: string | null;
  /** StormRecord.late: the rate series counts some calls in a later second. */
  seriesLate: string | null;
  /** The workers' client, asked for and run, and why they differ; null in older run folders. */
  loadClient: LoadClientRecord | null;
  /** The bystander pods' service level; null without bystanders. */
  bystanders: { successRatio: number; calls: number; p99Ms: number | null; longestGapMs: number } | null;
  expectationsPassed: number;
  expectationsFailed: number;
  expectationsInconclusive: number;
  expectations: { name: string; verdict: 'passed' | 'failed' | 'inconclusive'; message: string }[];
  passed: boolean;
  /** Why the variant could not be run, when it could not. */
  error: string | null;
}

/** One repetition of one variant's three nodes (scenario.cluster.topology three-node). */
export type ClusterRow = ClusterNodesRecord & { variant: string };

/** One fault of the schedule in one repetition of one variant, with its recovery figures. */
export interface FaultRow {
  variant: string;
  rep: number;
  action: string;
  /** Seconds from the calls' start; forSeconds null for an instant. */
  atSeconds: number;
  forSeconds: number | null;
  agentReadyMs: number | null;
  bystanderOkMs: number | null;
  callsLost: number | null;
  detail: string;
  error: string | null;
}

/** One repetition of a SPIRE variant that saved heap profiles: its largest and its last live heap by owner. */
export interface HeapRow {
  variant: string;
  rep: number;
  /** Repetitions of the variant that had profiles (the rep is named only when there are several). */
  reps: number;
  profiles: number;
  largest: SpireHeapProfileSummary;
  last: SpireHeapProfileSummary;
}

export interface Verdict {
  /** One sentence for the top of every report. */
  text: string;
  survived: VariantName[];
  oomKilled: VariantName[];
  notRun: VariantName[];
  /** Peak memory ratios against the unlimited agent, as the brief quotes them. */
  ratios: {
    preToDisabled: number | null;
    postToDisabled: number | null;
    /** When disabled was OOM-killed its peak is capped at the limit, so the ratios are upper bounds. */
    disabledCapped: boolean;
  };
  /** The field figures the brief asks to reproduce, kept next to ours for the reader. */
  fieldRatios: { preToDisabled: number; postToDisabled: number };
  expectationsPassed: boolean;
  /** The run's verdict as results.json records it (compared: no rule was judged). */
  runVerdict: RunVerdict;
  /** The rules the verdict judged and those it did not (computed for folders written before results.json kept it). */
  judgement: JudgementRecord;
}

/** y null is a gap: the agent was down (between an OOM kill and its restart), so no line is drawn. */
export interface Point {
  x: number;
  y: number | null;
}

/** One line on a time chart: x in seconds since the calls started (the load phase's first call). */
export interface SeriesLine {
  label: string;
  run: string;
  runIndex: number;
  variant: VariantName;
  rep: number;
  points: Point[];
}

export interface TimeSeries {
  /** The measure of `memory` (the first run's; working set unless its scenario chose another). */
  memoryMeasure: MemoryMeasure;
  /** Agent memory in MiB, in each run's memory measure. */
  memory: SeriesLine[];
  /** cgroup usage in MiB, beside a measure that is not usage (drawn thin and dashed). */
  memoryUsage: SeriesLine[];
  /** One horizontal line per distinct memory limit (MiB). */
  limits: { label: string; mib: number }[];
  /** OOM kills: x = time, y = the agent's memory just before (MiB). */
  oomKills: SeriesLine[];
  okRps: SeriesLine[];
  rejectedRps: SeriesLine[];
  deadlineExceededRps: SeriesLine[];
  errorRps: SeriesLine[];
  /** Bystanders' success ratio per second (0..1); empty without bystanders. */
  bystanderSuccess: SeriesLine[];
  inflight: SeriesLine[];
  /**
   * Storm workers calling per second (the most at once); only for variant runs whose storm changed
   * size (a burst, churn, a crashed pod): a flat line says nothing the scenario does not.
   */
  stormWorkers: SeriesLine[];
  /** Fault windows of the schedule (the same for every variant), seconds from the calls' start. */
  faultWindows: { action: string; from: number; to: number }[];
  /** The baseline run's peak per variant, when the run was compared with one (--baseline): before/after on the memory chart. */
  baselinePeaks: { variant: string; label: string; mib: number }[];
  /** x = 0 is when the calls started (pods up); the load phase ends at loadEnd (s), null when unknown. */
  loadEnd: number | null;
  /** Span of x over all series, for drawing the limit lines across the chart. */
  xRange: { min: number; max: number } | null;
}

export interface LatencyBar {
  run: string;
  variant: VariantName;
  outcome: Outcome;
  count: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
  /** 'results' when results.json had it; 'samples' when merged from the per-second histograms. */
  source: 'results' | 'samples';
}

export interface RejectionsByKey {
  run: string;
  variant: VariantName;
  byKeyType: Record<string, number>;
}

export interface RunReport {
  label: string;
  dir: string;
  status: 'running' | 'complete' | 'interrupted' | 'failed' | 'incomplete';
  scenarioName: string;
  scenarioDescription: string;
  scenarioFile: string | null;
  scenarioResolved: unknown;
  /** The scenario as the user wrote it (units as written); null for older run folders. */
  scenarioWritten: unknown;
  modeledCosts: Record<string, unknown>;
  command: string;
  environment: Record<string, unknown>;
  /** The measure of the run's peaks (working set unless its scenario chose another; usage for older folders). */
  memoryMeasure: MemoryMeasure;
  startedAt: string;
  endedAt: string | null;
  tool: string;
  rows: TableRow[];
  verdict: Verdict;
  latency: LatencyBar[];
  rejections: RejectionsByKey[];
  warnings: string[];
  /** Every fault as it happened, per variant and repetition (empty without faults). */
  faults: FaultRow[];
  /** SPIRE's live heap by owner, per repetition that saved heap profiles (empty without). */
  heap: HeapRow[];
  /** A three-node run's nodes side by side, per variant and repetition (empty for other runs). */
  clusterNodes: ClusterRow[];
  /** The kubelet emulator's /pods figures per variant (empty where none were recorded). */
  kubeletFetches: FetchRow[];
  /** Per variant's first repetition with fetch lines: the fetch timeline beside what waited on it. */
  fetchTimelines: FetchTimeline[];
  /** SPIRE's goroutines by owner, per repetition that saved goroutine profiles (empty without). */
  goroutines: GoroutineRow[];
  /** Each variant's repetitions, their spread, and the differences between variants by the spread rule. */
  repetitions: VariantRepetitions[];
  spread: SpreadRow[];
  differences: DifferenceRow[];
  /** A run made of several folders of one scenario merged as repetitions (`report` over them); null otherwise. */
  mergedFrom: MergedSource[] | null;
  /** What differed between the merged folders (--merge-anyway). */
  mergeNotes: string[];
}

/** One run folder a merged run's repetitions came from. */
export interface MergedSource {
  label: string;
  dir: string;
  repetitions: number;
  commit: string | null;
  machine: string | null;
  startedAt: string;
}

/** A change between the baseline (first) run and a later one, for one variant. */
export interface Delta {
  baseline: number | null;
  value: number | null;
  /** value - baseline; null when either side is missing. */
  delta: number | null;
  /** Relative change in percent; null when the baseline is 0 or missing. */
  percent: number | null;
}

export interface DeltaRow {
  baselineRun: string;
  run: string;
  variant: VariantName;
  peakMemoryMiB: Delta;
  oomKills: Delta;
  okRps: Delta;
  okP99Ms: Delta;
}

export interface ReportData {
  runs: RunReport[];
  /** Present only with several run folders: each later run against the first. */
  comparison: DeltaRow[] | null;
  /** Present only with several run folders: each later run's variants against the first's, by the spread rule. */
  runDifferences: DifferenceRow[] | null;
  series: TimeSeries;
}

import type { DifferenceRow, SpreadRow, VariantRepetitions } from './spread.js';

/** A section another module renders (the CI baseline comparison), placed after the verdict and table. */
export interface ExtraSection {
  title: string;
  html: string;
  markdown: string[];
}

export interface FetchRow extends KubeletFetchRecord {
  run: string;
  variant: string;
  /** Where the figures come from: results.json, or the samples of a folder written before it kept them. */
  source: 'results' | 'samples';
}

/** One fetch on the timeline, seconds since the calls started. */
export interface FetchBar {
  start: number;
  /** The last byte written; null: never answered. */
  end: number | null;
  status: number | null;
  conn: number;
}

export interface FetchTimeline {
  run: string;
  runIndex: number;
  variant: string;
  /** Which repetition is drawn (the first with fetch lines), and how many the variant had. */
  rep: number;
  reps: number;
  fetches: FetchBar[];
  /** Seconds (their start) whose requests beyond the line cap were counted, not written one by one. */
  folded: { t: number; requests: number }[];
  /** What waited on the kubelet, each a line of its own. */
  waiting: { label: string; points: Point[] }[];
}

export interface GoroutineRow {
  variant: string;
  rep: number;
  reps: number;
  profiles: number;
  largest: SpireGoroutineProfileSummary;
  last: SpireGoroutineProfileSummary;
}
