// Time series for the charts, read from the samples: memory, calls/s, attestations in flight and the
// OOM-kill instants. x is seconds since each variant's load start, so variants line up.
import { runMemoryMeasure, sampleIn, type MemoryMeasure, type SampleLine } from '../contract/index.js';
import { downsampleMax } from './downsample.js';
import type { LoadedRun } from './load-run.js';
import type { Point, TimeSeries } from './report-model.js';
import { formatLimit } from './derive-table.js';

const MiB = 2 ** 20;
/** Enough to follow the shape of a 10-minute run at 100 ms without bloating the HTML. */
const MAX_MEMORY_POINTS = 1500;

/** The lines of one repetition, each in ascending x. */
interface RepLines {
  /** The run's memory measure (working set unless the scenario chose another). */
  memory: Point[];
  /** cgroup usage, drawn thin beside a measure that is not usage. */
  usage: Point[];
  ok: Point[];
  rejected: Point[];
  deadline: Point[];
  failed: Point[];
  bystanders: Point[];
  stormWorkers: Point[];
  inflight: Point[];
  kills: Point[];
  /** Where the load phase ended (s), when the samples mark it. */
  loadEnd: number | null;
  /** Span of x over the non-event samples, when there are any. */
  min: number;
  max: number;
  limits: number[];
}

export function deriveSeries(runs: LoadedRun[]): TimeSeries {
  const out: TimeSeries = {
    memoryMeasure: runs[0] ? runMemoryMeasure(runs[0].results) : 'working-set',
    memory: [],
    memoryUsage: [],
    limits: [],
    oomKills: [],
    okRps: [],
    rejectedRps: [],
    deadlineExceededRps: [],
    errorRps: [],
    bystanderSuccess: [],
    inflight: [],
    stormWorkers: [],
    faultWindows: [],
    baselinePeaks: [],
    loadEnd: null,
    xRange: null,
  };
  const limits = new Set<number>();
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  const several = runs.length > 1;
  if (runs.length === 1) out.baselinePeaks = baselinePeaks(runs[0]!);
  out.faultWindows = faultWindows(runs);

  runs.forEach((run, runIndex) => {
    for (const variant of run.results.variants) {
      const reps = variant.runDirs;
      reps.forEach((repDir, i) => {
        const rep = i + 1;
        let label: string = variant.name;
        if (reps.length > 1) label += ` r${rep}`;
        if (several) label = `${run.label} · ${label}`;
        const lines = repLines(run.samples.get(repDir) ?? [], variant.memoryLimitBytes, variant.memoryMeasure);
        addRepLines(out, { label, run: run.label, runIndex, variant: variant.name, rep }, lines);
        for (const l of lines.limits) limits.add(l);
        min = Math.min(min, lines.min);
        max = Math.max(max, lines.max);
      });
      if (variant.memoryLimitBytes > 0 && Number.isFinite(variant.memoryLimitBytes)) limits.add(variant.memoryLimitBytes);
    }
  });

  out.limits = [...limits].sort((a, b) => a - b).map((bytes) => ({ label: `limit ${formatLimit(bytes / MiB)}`, mib: bytes / MiB }));
  // Whole seconds at the ends read better than 30.05 on an axis.
  out.xRange = Number.isFinite(min) ? { min: Math.floor(min), max: Math.ceil(max) } : null;
  return out;
}

/**
 * A run compared with a baseline (results.baseline, written by --baseline) shows where each
 * variant's peak was before, next to where it is now.
 */
function baselinePeaks(run: LoadedRun): TimeSeries['baselinePeaks'] {
  const cmp = run.results.baseline as { from?: string; figures?: Array<{ variant: string; figure: string; before: number }> } | undefined;
  return (cmp?.figures ?? [])
    .filter((f) => f.figure === 'peakMemory' && Number.isFinite(f.before))
    .map((f) => ({ variant: f.variant, label: `baseline peak · ${f.variant}`, mib: f.before / MiB }));
}

/** The schedule is the same for every variant: drawn once, from the first that ran it. */
function faultWindows(runs: LoadedRun[]): TimeSeries['faultWindows'] {
  const scheduled = runs[0]?.results.variants.find((v) => v.faults?.length)?.faults?.filter((f) => f.rep === 1) ?? [];
  return scheduled.map((f) => ({ action: f.action, from: f.atMs / 1000, to: (f.atMs + (f.forMs ?? 0)) / 1000 }));
}

/** One repetition's samples as chart lines; x = 0 is the moment its calls started. */
function repLines(samples: SampleLine[], memoryLimitBytes: number, measure: MemoryMeasure): RepLines {
  const l: RepLines = {
    memory: [],
    usage: [],
    ok: [],
    rejected: [],
    deadline: [],
    failed: [],
    bystanders: [],
    stormWorkers: [],
    inflight: [],
    kills: [],
    loadEnd: null,
    min: Number.POSITIVE_INFINITY,
    max: Number.NEGATIVE_INFINITY,
    limits: [],
  };
  // x = 0 is the moment the calls started (the 'load' phase), so pod start-up and warm-up are
  // negative and every variant's load lines up; folders without phase events keep their origin.
  const loadPhase = samples.find((x) => x.kind === 'event' && x.type === 'phase' && x.phase === 'load');
  const drainPhase = samples.find((x) => x.kind === 'event' && x.type === 'phase' && x.phase === 'drain');
  const zero = loadPhase ? loadPhase.t : 0;
  if (loadPhase && drainPhase) l.loadEnd = (drainPhase.t - zero) / 1000;
  let lastUsage: number | null = null;
  for (const s of samples) {
    const x = (s.t - zero) / 1000;
    if (s.kind === 'memory') {
      // A sample without the measure (memory.stat unreadable) is a gap, never usage passed off as it.
      const y = sampleIn(s, measure);
      l.memory.push({ x, y: y === null ? null : y / MiB });
      if (measure !== 'usage') l.usage.push({ x, y: s.usageBytes / MiB });
      lastUsage = y ?? s.usageBytes;
      if (s.limitBytes > 0 && Number.isFinite(s.limitBytes)) l.limits.push(s.limitBytes);
    } else if (s.kind === 'load') {
      addLoadSecond(l, x, s);
    } else if (s.kind === 'metrics') {
      if (s.inflightAttestations !== null) l.inflight.push({ x, y: s.inflightAttestations });
    } else if (s.kind === 'event') {
      // The marker sits at the memory the agent held just before the kill: at or near the limit.
      if (s.type === 'oom-kill') l.kills.push({ x, y: (lastUsage ?? memoryLimitBytes) / MiB });
      // The agent is gone until it restarts: break the lines instead of drawing a slope across the outage.
      // (Only after the line has started: an agent that failed before its first sample leaves nothing to break.)
      if (s.type === 'oom-kill' || s.type === 'agent-exit') {
        if (l.memory.length > 0) l.memory.push({ x, y: null });
        if (l.usage.length > 0) l.usage.push({ x, y: null });
        if (l.inflight.length > 0) l.inflight.push({ x, y: null });
      }
    }
    if (s.kind !== 'event') {
      if (x < l.min) l.min = x;
      if (x > l.max) l.max = x;
    }
  }
  // Lines need ascending x (the charts declare their data normalized); a samples file can hold
  // lines out of order, e.g. events of a failed first agent start logged before the retry's.
  for (const list of [l.memory, l.usage, l.ok, l.rejected, l.deadline, l.failed, l.bystanders, l.inflight, l.stormWorkers, l.kills])
    list.sort((a, b) => a.x - b.x);
  return l;
}

function addLoadSecond(l: RepLines, x: number, s: Extract<SampleLine, { kind: 'load' }>): void {
  l.ok.push({ x, y: s.ok });
  l.rejected.push({ x, y: s.rateLimited });
  l.deadline.push({ x, y: s.deadlineExceeded });
  l.failed.push({ x, y: s.error });
  if (s.stormWorkers !== undefined) l.stormWorkers.push({ x, y: s.stormWorkers });
  if (s.bystanders) {
    const b = s.bystanders;
    const calls = b.ok + b.rateLimited + b.deadlineExceeded + b.error;
    // A second without a finished bystander call has no ratio: a gap, not a zero.
    l.bystanders.push({ x, y: calls > 0 ? b.ok / calls : null });
  }
}

/** A repetition's lines join the chart series; lines that would say nothing are left out. */
function addRepLines(out: TimeSeries, base: Omit<TimeSeries['memory'][number], 'points'>, l: RepLines): void {
  if (l.loadEnd !== null) out.loadEnd = Math.max(out.loadEnd ?? 0, l.loadEnd);
  if (new Set(l.stormWorkers.map((p) => p.y)).size > 1) out.stormWorkers.push({ ...base, points: l.stormWorkers });
  if (l.bystanders.some((p) => p.y !== null)) out.bystanderSuccess.push({ ...base, points: l.bystanders });
  if (l.memory.length > 0) out.memory.push({ ...base, points: downsampleMax(l.memory, MAX_MEMORY_POINTS) });
  if (l.usage.length > 0) out.memoryUsage.push({ ...base, label: `usage · ${base.label}`, points: downsampleMax(l.usage, MAX_MEMORY_POINTS) });
  if (l.ok.length > 0) {
    out.okRps.push({ ...base, points: l.ok });
    // A variant that never rejected (disabled) would only add a flat line at zero.
    if (l.rejected.some((p) => p.y !== 0)) out.rejectedRps.push({ ...base, points: l.rejected });
    if (l.deadline.some((p) => p.y !== 0)) out.deadlineExceededRps.push({ ...base, points: l.deadline });
    if (l.failed.some((p) => p.y !== 0)) out.errorRps.push({ ...base, points: l.failed });
  }
  if (l.inflight.some((p) => p.y !== null)) out.inflight.push({ ...base, points: downsampleMax(l.inflight, MAX_MEMORY_POINTS) });
  if (l.kills.length > 0) out.oomKills.push({ ...base, points: l.kills });
}

/** Highest cumulative rejection count per key type seen in metrics samples (counters only grow). */
export function rejectionsFromSamples(sampleLists: SampleLine[][]): Record<string, number> {
  const total: Record<string, number> = {};
  for (const samples of sampleLists) {
    const peak: Record<string, number> = {};
    for (const s of samples) {
      if (s.kind !== 'metrics') continue;
      for (const [key, n] of Object.entries(s.rejectedByKeyType ?? {})) peak[key] = Math.max(peak[key] ?? 0, n);
    }
    for (const [key, n] of Object.entries(peak)) total[key] = (total[key] ?? 0) + n;
  }
  return total;
}
