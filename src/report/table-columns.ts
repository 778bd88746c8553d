// The comparison table's columns, declared once so the HTML and Markdown tables cannot drift apart.
import { MEASURE_EXPLAINED, MEASURE_WORDS, workingSetPartsWords, type MemoryMeasure, type Outcome } from '../contract/index.js';
import type { Delta, DeltaRow, TableRow, FaultRow, LatencyBar } from './report-model.js';

export interface Column<R> {
  header: string;
  /** Plain text of the cell; renderers escape it for their format. */
  cell: (row: R) => string;
  numeric: boolean;
  /** A header over several adjacent columns that share it (HTML only): "storm calls/s" over ok, rejected, … */
  group?: string;
  /** Keep the cell on one line (short text). Numeric cells always are. */
  nowrap?: boolean;
}

export function fmt(value: number | null, digits = 1): string {
  if (value === null || !Number.isFinite(value)) return '—';
  return value.toFixed(digits);
}

function fmtMs(value: number | null): string {
  if (value === null) return '—';
  return value < 10 ? value.toFixed(2) : value.toFixed(1);
}

export function expectationsCell(row: TableRow): string {
  if (row.expectations.length === 0) return 'none set';
  const parts = [`${row.expectationsPassed} passed`];
  const notPassed = row.expectations.filter((e) => e.verdict !== 'passed').map((e) => `${e.verdict}: ${e.message}`);
  if (row.expectationsInconclusive) parts.push(`${row.expectationsInconclusive} inconclusive`);
  if (row.expectationsFailed) parts.push(`${row.expectationsFailed} failed`);
  return notPassed.length ? `${parts.join(', ')} — ${notPassed.join('; ')}` : parts[0]!;
}

function agentCell(r: TableRow): string {
  // An agent whose placement is unknown (external) has no key either: its kind alone.
  const key = r.agent.key ? ` (${r.agent.key})` : '';
  return `${r.agent.kind} ${r.agent.placement ?? ''}${key}`.trim();
}

// Each column once; the tables below pick from them.
const C = {
  variant: { header: 'variant', cell: (r) => (r.error !== null ? `${r.variant} (not run)` : r.variant), numeric: false },
  agent: { header: 'agent', cell: agentCell, numeric: false },
  limit: { header: 'memory limit (MiB)', cell: (r) => (r.memoryLimitMiB === null ? 'none' : fmt(r.memoryLimitMiB, 0)), numeric: true },
  peakUsage: { header: 'peak usage, page cache included (MiB)', cell: (r) => fmt(r.peakUsageMiB), numeric: true },
  oomKills: { header: 'OOM kills', cell: (r) => String(r.oomKills), numeric: true },
  // The worst repetition: seconds at >= 95% of the limit of its storm's, the limit's hits, PSI some.
  nearLimit: {
    header: 'at ≥ 95% of limit (s of storm; hits; stalled)',
    cell: (r) => {
      const p = r.nearLimit;
      if (!p) return '—';
      const parts = [`${fmt(p.nearLimitSeconds)} of ${fmt(p.stormSeconds, 0)}`];
      if (p.limitHits !== null) parts.push(`${p.limitHits} hits`);
      if (p.stallSome !== null) parts.push(`stalled ${Math.round(100 * p.stallSome)}%`);
      return `${parts.join('; ')}${r.atLimit ? ' (at its limit)' : ''}`;
    },
    numeric: true,
  },
  restarts: { header: 'restarts', cell: (r) => String(r.restarts), numeric: true },
  downtime: { header: 'downtime (s)', cell: (r) => fmt(r.downtimeSeconds), numeric: true },
  offered: {
    header: 'offered → answered calls/s',
    cell: (r) =>
      r.offeredRps === null
        ? '—'
        : `${fmt(r.offeredRps)} → ${fmt(r.deliveredRps)}${r.generatorCpuShare === null ? '' : ` (generator CPU ${Math.round(100 * r.generatorCpuShare)}%)`}`,
    numeric: true,
  },
  offeredShort: {
    header: 'offered → answered calls/s',
    cell: (r) => (r.offeredRps === null ? '—' : `${fmt(r.offeredRps)} → ${fmt(r.deliveredRps)}`),
    numeric: true,
  },
  generatorCpu: {
    header: 'load generator CPU (% of the machine)',
    cell: (r) => (r.generatorCpuShare === null ? '—' : String(Math.round(100 * r.generatorCpuShare))),
    numeric: true,
  },
  bystanders: {
    header: 'bystanders served (longest gap)',
    cell: (r) =>
      r.bystanders === null
        ? '—'
        : `${Math.round(100 * r.bystanders.successRatio)}% of ${r.bystanders.calls} (${(r.bystanders.longestGapMs / 1000).toFixed(1)} s)`,
    numeric: true,
  },
  bystandersShort: {
    header: 'bystander calls served',
    cell: (r) => (r.bystanders === null ? '—' : `${Math.round(100 * r.bystanders.successRatio)}% of ${r.bystanders.calls}`),
    numeric: true,
  },
  bystanderGap: {
    header: "bystanders' longest gap (s)",
    cell: (r) => (r.bystanders === null ? '—' : (r.bystanders.longestGapMs / 1000).toFixed(1)),
    numeric: true,
  },
  bystanderP99: { header: 'bystander p99 (ms)', cell: (r) => fmtMs(r.bystanders?.p99Ms ?? null), numeric: true },
  ok: { header: 'ok/s', cell: (r) => fmt(r.okRps), numeric: true },
  rejected: { header: 'rejected/s', cell: (r) => fmt(r.rejectedRps), numeric: true },
  deadline: { header: 'deadline exceeded/s', cell: (r) => fmt(r.deadlineExceededRps), numeric: true },
  errors: { header: 'other errors/s', cell: (r) => fmt(r.errorRps), numeric: true },
  p50: { header: 'ok p50 (ms)', cell: (r) => fmtMs(r.okP50Ms), numeric: true },
  p99: { header: 'ok p99 (ms)', cell: (r) => fmtMs(r.okP99Ms), numeric: true },
  inflight: {
    header: 'peak attestations in flight',
    cell: (r) => (r.peakInflightAttestations === null ? '—' : String(r.peakInflightAttestations)),
    numeric: true,
  },
  connections: {
    // SPIRE reports no attestations in flight; with a connection per call each open connection is a call held.
    header: 'peak connections open (agent)',
    cell: (r) => (r.peakOpenConnections === null ? '—' : String(r.peakOpenConnections)),
    numeric: true,
  },
  loadClient: {
    header: "workers' client",
    cell: (r) =>
      r.loadClient === null
        ? '—'
        : r.loadClient.ran === r.loadClient.requested
          ? r.loadClient.ran
          : `${r.loadClient.ran} (${r.loadClient.requested} asked for)`,
    numeric: false,
  },
  expectations: { header: 'expectations', cell: expectationsCell, numeric: false },
  expectationsShort: { header: 'expectations', cell: expectationsCount, numeric: false },
} satisfies Record<string, Column<TableRow>>;

/** The peak columns, headed by the run's measure: "peak working set (MiB)". */
function peakColumns(m: MemoryMeasure) {
  const w = MEASURE_WORDS[m];
  return {
    peak: { header: `peak ${w} (MiB)`, cell: (r) => `${peakCell(r)}${rangeCell(r) ? ` [${rangeCell(r)}]` : ''}`, numeric: true },
    peakShort: { header: `peak ${w} (MiB)`, cell: peakCell, numeric: true },
    peakRange: { header: `peak ${w} over repetitions (MiB)`, cell: (r) => rangeCell(r) ?? '—', numeric: true },
  } satisfies Record<string, Column<TableRow>>;
}

function peakCell(r: TableRow): string {
  if (r.peakMemoryMiB === null) return 'unmeasured';
  return `${r.oomKills > 0 ? '≥ ' : ''}${fmt(r.peakMemoryMiB)}${r.peakPercentOfLimit === null ? '' : ` (${Math.round(r.peakPercentOfLimit)}%)`}`;
}

function rangeCell(r: TableRow): string | null {
  return r.peakRangeMiB ? `${fmt(r.peakRangeMiB.min)}–${fmt(r.peakRangeMiB.max)}, ${r.repetitions} repetitions` : null;
}

/** "3 of 3 met", "1 of 5 failed, 2 inconclusive": the count only; the messages are listed under the table. */
export function expectationsCount(row: TableRow): string {
  const n = row.expectations.length;
  if (n === 0) return 'none set';
  if (row.expectationsFailed === 0 && row.expectationsInconclusive === 0) return `${n} of ${n} met`;
  const parts: string[] = [];
  if (row.expectationsFailed) parts.push(`${row.expectationsFailed} of ${n} failed`);
  if (row.expectationsInconclusive) parts.push(`${row.expectationsInconclusive}${parts.length ? '' : ` of ${n}`} inconclusive`);
  return parts.join(', ');
}

/** Every column, for the Markdown summary (a job summary scrolls sideways; a page should not). */
export function tableColumns(withRun: boolean, measure: MemoryMeasure, rows: readonly TableRow[] = []): Column<TableRow>[] {
  const cols: Column<TableRow>[] = [
    C.variant,
    C.agent,
    C.limit,
    peakColumns(measure).peak,
    // Usage beside the working set, and what was held in flight, where the run measured them.
    ...(rows.some((r) => r.peakUsageMiB !== null) ? [C.peakUsage] : []),
    C.oomKills,
    ...(rows.some((r) => r.nearLimit !== null) ? [C.nearLimit] : []),
    C.restarts,
    C.downtime,
    C.offered,
    C.bystanders,
    C.ok,
    C.rejected,
    C.deadline,
    C.errors,
    C.p50,
    C.p99,
    ...(rows.some((r) => r.peakInflightAttestations !== null) ? [C.inflight] : []),
    ...(rows.some((r) => r.peakOpenConnections !== null) ? [C.connections] : []),
    C.loadClient,
    C.expectations,
  ];
  if (withRun) cols.unshift({ header: 'run', cell: (r) => r.run, numeric: false });
  return cols;
}

/** The page's comparison table: what decides between the variants, narrow enough for a laptop. */
const perSecond = (c: Column<TableRow>, header: string): Column<TableRow> => ({ ...c, header, group: 'storm calls/s' });
export const summaryColumns = (measure: MemoryMeasure): Column<TableRow>[] => [
  C.variant,
  C.limit,
  peakColumns(measure).peakShort,
  C.oomKills,
  C.bystandersShort,
  perSecond(C.offeredShort, 'offered → answered'),
  perSecond(C.ok, 'ok'),
  perSecond(C.rejected, 'rejected'),
  perSecond(C.deadline, 'deadline exceeded'),
  perSecond(C.errors, 'other errors'),
  C.p99,
  { ...C.expectationsShort, nowrap: true },
];

/** The rest of each variant's figures, in a second table the reader opens. */
export function detailColumns(rows: TableRow[], measure: MemoryMeasure): Column<TableRow>[] {
  const cols: Column<TableRow>[] = [
    C.variant,
    C.agent,
    C.restarts,
    C.downtime,
    C.loadClient,
    C.generatorCpu,
    C.bystanderGap,
    C.bystanderP99,
    C.p50,
    C.inflight,
  ];
  if (rows.some((r) => r.peakOpenConnections !== null)) cols.push(C.connections);
  if (rows.some((r) => r.peakRangeMiB !== null)) cols.splice(2, 0, peakColumns(measure).peakRange);
  if (rows.some((r) => r.peakUsageMiB !== null)) cols.splice(2, 0, C.peakUsage);
  return cols;
}

function fmtDelta(d: Delta, digits: number): string {
  if (d.baseline === null || d.value === null) return `${fmt(d.baseline, digits)} → ${fmt(d.value, digits)}`;
  if (d.delta === 0) return `${fmt(d.value, digits)}: no change`;
  const sign = d.delta! > 0 ? '+' : '';
  const pct = d.percent === null ? '' : ` (${d.percent > 0 ? '+' : ''}${d.percent.toFixed(0)}%)`;
  return `${fmt(d.baseline, digits)} → ${fmt(d.value, digits)}: ${sign}${fmt(d.delta, digits)}${pct}`;
}

const ms = (v: number | null) => (v === null ? '—' : v < 1000 ? `${Math.round(v)} ms` : `${(v / 1000).toFixed(1)} s`);

/** The fault timeline: when each fault ran and how the agent and the bystanders recovered. */
export const FAULT_COLUMNS: Column<FaultRow>[] = [
  { header: 'variant', cell: (r) => (r.rep > 1 ? `${r.variant} r${r.rep}` : r.variant), numeric: false },
  { header: 'fault', cell: (r) => r.action, numeric: false },
  { header: 'at (s)', cell: (r) => fmt(r.atSeconds), numeric: true },
  { header: 'for (s)', cell: (r) => (r.forSeconds === null ? 'instant' : fmt(r.forSeconds)), numeric: true },
  { header: 'agent answers again', cell: (r) => ms(r.agentReadyMs), numeric: true },
  { header: 'bystanders ok again', cell: (r) => ms(r.bystanderOkMs), numeric: true },
  { header: 'bystander calls lost', cell: (r) => (r.callsLost === null ? '—' : String(r.callsLost)), numeric: true },
  { header: 'what happened', cell: (r) => (r.error ? `not applied: ${r.error}` : r.detail), numeric: false },
];

export const DELTA_COLUMNS: Column<DeltaRow>[] = [
  { header: 'run vs baseline', cell: (r) => `${r.run} vs ${r.baselineRun}`, numeric: false },
  { header: 'variant', cell: (r) => r.variant, numeric: false },
  { header: 'peak memory (MiB)', cell: (r) => fmtDelta(r.peakMemoryMiB, 1), numeric: true },
  { header: 'OOM kills', cell: (r) => fmtDelta(r.oomKills, 0), numeric: true },
  { header: 'ok/s', cell: (r) => fmtDelta(r.okRps, 1), numeric: true },
  { header: 'ok p99 (ms)', cell: (r) => fmtDelta(r.okP99Ms, 2), numeric: true },
];

/** Outcomes in the words of the calls-per-second chart's legend. */
const OUTCOME_WORDS: Record<Outcome, string> = { ok: 'ok', rateLimited: 'rate-limited', deadlineExceeded: 'deadline exceeded', error: 'other errors' };

/** Latency percentiles per variant and outcome; with several runs each variant is named with its run. */
export function latencyColumns(several: boolean): Column<LatencyBar>[] {
  const pct = (header: string, key: 'p50Ms' | 'p90Ms' | 'p99Ms' | 'p999Ms' | 'maxMs'): Column<LatencyBar> => ({
    header: `${header} (ms)`,
    cell: (r) => fmtMs(r[key]),
    numeric: true,
  });
  return [
    { header: 'variant', cell: (r) => (several ? `${r.run} · ${r.variant}` : r.variant), numeric: false, nowrap: true },
    { header: 'outcome', cell: (r) => OUTCOME_WORDS[r.outcome] ?? r.outcome, numeric: false, nowrap: true },
    { header: 'calls', cell: (r) => String(r.count), numeric: true },
    pct('p50', 'p50Ms'),
    pct('p90', 'p90Ms'),
    pct('p99', 'p99Ms'),
    pct('p99.9', 'p999Ms'),
    pct('max', 'maxMs'),
  ];
}

/** The sentence under a run's table: which measure its peaks are, and what the verdict on survival rests on. */
export function measureNote(m: MemoryMeasure): string {
  return `Peak memory is the ${MEASURE_WORDS[m]}: ${MEASURE_EXPLAINED[m]}. Survival is the kernel's OOM kill, whatever the peak.`;
}

/**
 * The sentence that explains each variant's peak working set by its parts, at the highest reading
 * ("ref-pre: 254.8 MiB working set = 212.9 RSS + 38.0 kernel + 3.9 file pages …"); null when no
 * variant's sampler read them.
 */
export function workingSetPartsNote(rows: readonly TableRow[]): string | null {
  const items = rows.flatMap((r) => {
    const p = r.workingSetParts;
    if (!p) return [];
    const where = `${(p.t / 1000).toFixed(1)} s after the load started${p.runDir && r.repetitions > 1 ? `, in ${p.runDir}` : ''}`;
    return [`${r.variant}: ${workingSetPartsWords(p)} (${where})`];
  });
  if (!items.length) return null;
  return `The working set at its highest reading, in MiB: ${items.join('; ')}.`;
}
