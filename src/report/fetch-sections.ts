// The report's sections on the kubelet fetch schedule and SPIRE's goroutines, for report.html and
// summary.md: each renderer hands in its own table function, so the sections read like the others.
import { escapeHtml } from './html-escape.js';
import { kubeletFetchMermaid } from './chart-kubelet.js';
import { FETCH_COLUMNS, FETCH_TABLE_TITLE, fetchTableNote, GOROUTINE_COLUMNS, GOROUTINE_TABLE_TITLE, goroutineTableNote } from './kubelet-table.js';
import type { ReportData, RunReport } from './report-model.js';
import type { Column } from './table-columns.js';

type TableOf = <R>(columns: Column<R>[], rows: R[], testId: string) => string;

export function fetchSectionsHtml(run: RunReport, table: TableOf): string[] {
  const out: string[] = [];
  if (run.kubeletFetches.length > 0) {
    out.push(`<h3 id="kubelet-fetches">${escapeHtml(FETCH_TABLE_TITLE)}</h3>`);
    out.push(table(FETCH_COLUMNS, run.kubeletFetches, 'kubelet-fetches'));
    out.push(`<p class="meta">${escapeHtml(fetchTableNote(run.kubeletFetches))} The timelines are under Charts.</p>`);
  }
  if (run.goroutines.length > 0) {
    out.push(`<h3 id="spire-goroutines">${escapeHtml(GOROUTINE_TABLE_TITLE)}</h3>`);
    out.push(table(GOROUTINE_COLUMNS, run.goroutines, 'spire-goroutines'));
    out.push(`<p class="meta">${escapeHtml(goroutineTableNote())}</p>`);
  }
  return out;
}

export function fetchSectionsMarkdown(run: RunReport, table: <R>(columns: Column<R>[], rows: R[]) => string): string[] {
  const out: string[] = [];
  if (run.kubeletFetches.length > 0)
    out.push('', `**${FETCH_TABLE_TITLE}**`, '', table(FETCH_COLUMNS, run.kubeletFetches), '', fetchTableNote(run.kubeletFetches));
  if (run.goroutines.length > 0) out.push('', `**${GOROUTINE_TABLE_TITLE}**`, '', table(GOROUTINE_COLUMNS, run.goroutines), '', goroutineTableNote());
  return out;
}

/** The fetch timelines as Mermaid charts (each variant's first repetition with fetch lines). */
export function fetchMermaidCharts(data: ReportData, maxPoints: number): string[] {
  const range = data.series.xRange;
  if (!range || range.max <= range.min) return [];
  const several = data.runs.length > 1;
  return data.runs.flatMap((r) => r.fetchTimelines).flatMap((t, i) => [...(i > 0 ? [''] : []), ...kubeletFetchMermaid(t, several, range, maxPoints)]);
}
