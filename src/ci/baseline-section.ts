// The baseline comparison as a section of report.html and summary.md, rendered by the report when a
// run folder's results.json holds one.
import type { ExtraSection } from '../report/index.js';
import { escapeHtml } from '../report/index.js';
import type { BaselineComparison } from './baseline.js';
import { baselineTableHtml, baselineTableMarkdown } from './baseline-table.js';

export function baselineSection(cmp: BaselineComparison): ExtraSection {
  return { title: `Against the baseline (${cmp.from})`, html: baselineTableHtml(cmp, escapeHtml), markdown: baselineTableMarkdown(cmp) };
}

/** The section for a run folder's results, when it was compared with a baseline. */
export function baselineSectionsOf(results: { baseline?: unknown }): ExtraSection[] {
  const cmp = results.baseline as BaselineComparison | undefined;
  return cmp && Array.isArray(cmp.figures) ? [baselineSection(cmp)] : [];
}
