// summary.md: verdict and table in GitHub-flavoured Markdown, for a CI job summary or a pull-request
// comment. The time charts are Mermaid blocks GitHub draws itself; the PNGs next to it are named.
import { modeledCostsSentences } from '../contract/index.js';
import type { ExtraSection } from './report-model.js';
import type { ReportData } from './report-model.js';
import { MERMAID_MAX_POINTS, renderMermaidCharts } from './render-mermaid.js';
import { fetchMermaidCharts, fetchSectionsMarkdown } from './fetch-sections.js';
import { runDifferencesMarkdown, spreadSectionMarkdown } from './spread-section.js';
import { HEAP_COLUMNS, HEAP_TABLE_TITLE, heapTableNote } from './heap-table.js';
import { CLUSTER_COLUMNS, CLUSTER_NOTE, flatColumns } from './cluster-columns.js';
import { DELTA_COLUMNS, FAULT_COLUMNS, latencyColumns, measureNote, tableColumns, workingSetPartsNote, type Column } from './table-columns.js';

function cell(text: string): string {
  // A pipe would split the cell and a newline would end the row.
  return text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

function mdTable<R>(columns: Column<R>[], rows: R[]): string {
  const head = `| ${columns.map((c) => cell(c.header)).join(' | ')} |`;
  const rule = `|${columns.map((c) => (c.numeric ? '---:' : '---')).join('|')}|`;
  const body = rows.map((r) => `| ${columns.map((c) => cell(c.cell(r))).join(' | ')} |`);
  return [head, rule, ...body].join('\n');
}

/** `pngs` maps chart id to the PNG's path relative to summary.md, for the charts that were written. */
export function renderMarkdown(data: ReportData, pngs: { id: string; title: string; file: string }[], extra: ExtraSection[] = []): string {
  const several = data.runs.length > 1;
  const out: string[] = [];
  out.push(several ? `## attestorm comparison: ${data.runs.map((r) => r.label).join(' vs ')}` : `## attestorm: ${data.runs[0]!.scenarioName}`);
  for (const run of data.runs) {
    out.push('');
    if (several) out.push(`### ${run.label}: ${run.scenarioName}`, '');
    // Nothing that did not run, or did not finish, may pass; an inconclusive verdict is not a pass either.
    const v = run.verdict.runVerdict;
    // ✅ only over judged rules: a comparison (nothing judged) gets a neutral mark.
    const mark = v === 'compared' ? 'ℹ️' : !run.verdict.expectationsPassed ? '❌' : v === 'passed' ? '✅' : '⚠️';
    out.push(`${mark} **Verdict:** ${run.verdict.text}`, '');
    out.push(mdTable(tableColumns(false, run.memoryMeasure, run.rows), run.rows), '', measureNote(run.memoryMeasure));
    const parts = workingSetPartsNote(run.rows);
    if (parts) out.push('', parts);
    if (run.faults.length > 0)
      out.push('', "**Faults** (times from the calls' start; recovery of the agent and the bystanders):", '', mdTable(FAULT_COLUMNS, run.faults));
    if (run.heap.length > 0) out.push('', `**${HEAP_TABLE_TITLE}**`, '', mdTable(HEAP_COLUMNS, run.heap), '', heapTableNote());
    out.push(...spreadSectionMarkdown(run, mdTable));
    out.push(...fetchSectionsMarkdown(run, mdTable));
    if (run.clusterNodes.length > 0) out.push('', `**Cluster**: ${CLUSTER_NOTE}`, '', mdTable(flatColumns(CLUSTER_COLUMNS), run.clusterNodes));
    const delegation = run.environment['cgroupDelegation'] as { kind?: string } | undefined;
    const cgroups = run.environment['cgroupVersion']
      ? ` cgroup ${String(run.environment['cgroupVersion'])}${delegation?.kind ? ` (${delegation.kind})` : ''}.`
      : '';
    const where = typeof run.environment['cluster'] === 'string' ? ` Cluster: ${run.environment['cluster']}.` : '';
    out.push('', `Status: ${run.status}.${where} OOM fidelity: ${String(run.environment['oomFidelity'] ?? 'unknown')}.${cgroups}`);
    const costs = modeledCostsSentences(
      run.modeledCosts,
      run.rows.map((r) => r.variant),
    );
    if (costs.length > 0) out.push('', 'Modeled costs and behaviours (differing from the agent defaults):', '', ...costs.map((c) => `- ${cell(c)}`));
    if (run.command) out.push('', 'Rerun:', '', '```sh', run.command, '```');
    if (run.warnings.length > 0) out.push('', ...run.warnings.map((w) => `- ⚠ ${w}`));
  }
  for (const x of extra) out.push('', `### ${x.title}`, '', ...x.markdown);
  out.push(...runDifferencesMarkdown(data, mdTable));
  if (data.comparison && data.comparison.length > 0) {
    out.push('', `### Against the baseline (${data.runs[0]!.label})`, '', mdTable(DELTA_COLUMNS, data.comparison));
  }
  const latency = data.runs.flatMap((r) => r.latency);
  if (latency.length > 0) out.push('', '### Latency per outcome', '', mdTable(latencyColumns(several), latency));
  const charts = renderMermaidCharts(data);
  const fetchCharts = fetchMermaidCharts(data, MERMAID_MAX_POINTS);
  if (charts.length > 0 && fetchCharts.length > 0) charts.push('');
  charts.push(...fetchCharts);
  if (charts.length > 0 || pngs.length > 0) out.push('', '### Charts');
  if (charts.length > 0) out.push('', ...charts);
  // Images would need hosting wherever this file is shown; the PNGs are named, not embedded.
  if (pngs.length > 0) out.push('', `Every chart as a PNG next to this file: ${pngs.map((p) => `\`${p.file}\``).join(', ')}.`);
  out.push('');
  return out.join('\n');
}
