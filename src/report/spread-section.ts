// The report's "Repetitions and spread" section (report.html, summary.md): each variant's figures
// as median (min–max) over its repetitions, the OOM kills as a distribution, and the differences
// judged by the spread rule. Columns declared once; each renderer hands in its table function.
import { SPREAD_RULE } from '../contract/index.js';
import { escapeHtml } from './html-escape.js';
import type { ReportData, RunReport } from './report-model.js';
import type { DifferenceRow, SpreadRow } from './spread.js';
import { fmt, type Column } from './table-columns.js';

const spreadText = (s: { median: number; min: number; max: number } | null, digits: number, runs: number) =>
  s === null ? '—' : runs > 1 ? `${fmt(s.median, digits)} (${fmt(s.min, digits)}–${fmt(s.max, digits)})` : fmt(s.median, digits);

export const SPREAD_COLUMNS: Column<SpreadRow>[] = [
  { header: 'variant', cell: (r) => r.variant, numeric: false },
  { header: 'runs', cell: (r) => String(r.runs), numeric: true },
  { header: 'peak memory (MiB)', cell: (r) => spreadText(r.peakMiB, 1, r.runs), numeric: true },
  { header: 'ok/s', cell: (r) => spreadText(r.okRps, 1, r.runs), numeric: true },
  { header: 'OOM kills (time from the calls’ start)', cell: (r) => r.oomKills, numeric: false },
  { header: 'kubelet requests/s', cell: (r) => spreadText(r.kubeletRps, 2, r.runs), numeric: true },
];

export const DIFFERENCE_COLUMNS: Column<DifferenceRow>[] = [
  { header: 'compared', cell: (r) => r.what, numeric: false },
  { header: 'figure', cell: (r) => r.figure, numeric: false },
  { header: 'first', cell: (r) => spreadText(r.a, r.digits, r.a.runs), numeric: true },
  { header: 'second', cell: (r) => spreadText(r.b, r.digits, r.b.runs), numeric: true },
  { header: 'difference', cell: (r) => r.comparison.text, numeric: false },
];

const SPREAD_NOTE =
  'Median over the repetitions with min–max in brackets; time to the first OOM kill of each repetition, counting those that survived. ' +
  'The differences: the second against the first (a variant against another of the same run, or a run against the first run). ';

/** Where a merged run's repetitions came from, in one sentence. */
function mergedNote(run: RunReport): string | null {
  if (!run.mergedFrom) return null;
  const parts = run.mergedFrom.map(
    (m) =>
      `${m.label} (${m.repetitions} repetition${m.repetitions === 1 ? '' : 's'} per variant; commit ${m.commit ?? 'unknown'}; machine ${m.machine ?? 'unknown'}; started ${m.startedAt})`,
  );
  return `Repetitions merged from ${run.mergedFrom.length} run folders of scenario ${run.scenarioName}, numbered in this order: ${parts.join('; ')}.${run.mergeNotes.length ? ` Differences between them, merged anyway: ${run.mergeNotes.join('; ')}.` : ''}`;
}

type HtmlTable = <R>(columns: Column<R>[], rows: R[], testId: string) => string;
type MdTable = <R>(columns: Column<R>[], rows: R[]) => string;

/** Shown for any run with a variant of several repetitions, with several variants, or merged. */
function shown(run: RunReport): boolean {
  return run.mergedFrom !== null || run.spread.some((r) => r.runs > 1) || run.differences.length > 0;
}

export function spreadSectionHtml(run: RunReport, table: HtmlTable): string[] {
  if (!shown(run)) return [];
  const merged = mergedNote(run);
  return [
    '<h3 id="repetitions">Repetitions and spread</h3>',
    ...(merged ? [`<p data-testid="merged-from">${escapeHtml(merged)}</p>`] : []),
    table(SPREAD_COLUMNS, run.spread, 'repetitions'),
    ...(run.differences.length ? [table(DIFFERENCE_COLUMNS, run.differences, 'differences')] : []),
    `<p class="meta">${escapeHtml(SPREAD_NOTE + SPREAD_RULE)}</p>`,
  ];
}

export function spreadSectionMarkdown(run: RunReport, table: MdTable): string[] {
  if (!shown(run)) return [];
  const merged = mergedNote(run);
  return [
    '',
    '**Repetitions and spread**',
    ...(merged ? ['', merged] : []),
    '',
    table(SPREAD_COLUMNS, run.spread),
    ...(run.differences.length ? ['', table(DIFFERENCE_COLUMNS, run.differences)] : []),
    '',
    SPREAD_NOTE + SPREAD_RULE,
  ];
}

/** Each later run against the first, variant by variant, by the same rule. */
export function runDifferencesHtml(data: ReportData, table: HtmlTable): string[] {
  if (!data.runDifferences?.length) return [];
  return [
    '<h2 id="run-differences">Differences between runs, by their spread</h2>',
    table(DIFFERENCE_COLUMNS, data.runDifferences, 'run-differences'),
    `<p class="meta">${escapeHtml(SPREAD_RULE)}</p>`,
  ];
}

export function runDifferencesMarkdown(data: ReportData, table: MdTable): string[] {
  if (!data.runDifferences?.length) return [];
  return ['', '### Differences between runs, by their spread', '', table(DIFFERENCE_COLUMNS, data.runDifferences), '', SPREAD_RULE];
}
