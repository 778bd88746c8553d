// The comparison table's columns, declared once so the HTML and Markdown tables cannot drift apart.
import type { Delta, DeltaRow, TableRow, FaultRow } from './report-model.js';

export interface Column<R> {
  header: string;
  /** Plain text of the cell; renderers escape it for their format. */
  cell: (row: R) => string;
  numeric: boolean;
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
  if (r.agent.kind === 'external') return 'external';
  const key = r.agent.key ? ` (${r.agent.key})` : '';
  return `${r.agent.kind} ${r.agent.placement ?? ''}${key}`.trim();
}

export function tableColumns(withRun: boolean): Column<TableRow>[] {
  const cols: Column<TableRow>[] = [
    { header: 'variant', cell: (r) => (r.error !== null ? `${r.placement} (not run)` : r.placement), numeric: false },
    { header: 'agent', cell: agentCell, numeric: false },
    { header: 'memory limit (MiB)', cell: (r) => (r.memoryLimitMiB === null ? 'none' : fmt(r.memoryLimitMiB, 0)), numeric: true },
    {
      header: 'peak memory (MiB)',
      cell: (r) =>
        r.peakMemoryMiB === null ? 'unmeasured' : `${r.oomKills > 0 ? '≥ ' : ''}${fmt(r.peakMemoryMiB)}${r.peakPercentOfLimit === null ? '' : ` (${Math.round(r.peakPercentOfLimit)}%)`}${r.peakRangeMiB ? ` [${fmt(r.peakRangeMiB.min)}–${fmt(r.peakRangeMiB.max)}, ${r.repetitions} reps]` : ''}`,
      numeric: true,
    },
    { header: 'OOM kills', cell: (r) => String(r.oomKills), numeric: true },
    { header: 'restarts', cell: (r) => String(r.restarts), numeric: true },
    { header: 'downtime (s)', cell: (r) => fmt(r.downtimeSeconds), numeric: true },
    {
      header: 'offered → answered calls/s',
      cell: (r) => (r.offeredRps === null ? '—' : `${fmt(r.offeredRps)} → ${fmt(r.deliveredRps)}${r.generatorCpuShare === null ? '' : ` (generator CPU ${Math.round(100 * r.generatorCpuShare)}%)`}`),
      numeric: true,
    },
    {
      header: 'bystanders served (longest gap)',
      cell: (r) => (r.bystanders === null ? '—' : `${Math.round(100 * r.bystanders.successRatio)}% of ${r.bystanders.calls} (${(r.bystanders.longestGapMs / 1000).toFixed(1)} s)`),
      numeric: true,
    },
    { header: 'ok/s', cell: (r) => fmt(r.okRps), numeric: true },
    { header: 'rejected/s', cell: (r) => fmt(r.rejectedRps), numeric: true },
    { header: 'deadline exceeded/s', cell: (r) => fmt(r.deadlineExceededRps), numeric: true },
    { header: 'other errors/s', cell: (r) => fmt(r.errorRps), numeric: true },
    { header: 'ok p50 (ms)', cell: (r) => fmtMs(r.okP50Ms), numeric: true },
    { header: 'ok p99 (ms)', cell: (r) => fmtMs(r.okP99Ms), numeric: true },
    { header: 'expectations', cell: expectationsCell, numeric: false },
  ];
  if (withRun) cols.unshift({ header: 'run', cell: (r) => r.run, numeric: false });
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
  { header: 'variant', cell: (r) => r.placement, numeric: false },
  { header: 'peak memory (MiB)', cell: (r) => fmtDelta(r.peakMemoryMiB, 1), numeric: true },
  { header: 'OOM kills', cell: (r) => fmtDelta(r.oomKills, 0), numeric: true },
  { header: 'ok/s', cell: (r) => fmtDelta(r.okRps, 1), numeric: true },
  { header: 'ok p99 (ms)', cell: (r) => fmtDelta(r.okP99Ms, 2), numeric: true },
];
