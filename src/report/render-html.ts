// report.html: one self-contained page — Chart.js, the chart definitions and every figure inlined, a
// CSP that forbids any request — so it opens from a CI artifact with no network. Verdict, tables and
// text are plain HTML and readable without JavaScript; only the charts need it.
import { stringify as toYaml } from 'yaml';
import { modeledCostsInWords } from '../contract/index.js';
import { resolvedWithDefaults } from './scenario-as-written.js';
import { CLUSTER_COLUMNS, CLUSTER_NOTE } from './cluster-columns.js';
import type { ChartSpec } from './chart-kit.js';
import type { ExtraSection } from './report-model.js';
import { escapeHtml } from './html-escape.js';
import { HEAP_COLUMNS, HEAP_TABLE_TITLE, heapTableNote } from './heap-table.js';
import { fetchSectionsHtml } from './fetch-sections.js';
import { runDifferencesHtml, spreadSectionHtml } from './spread-section.js';
import { PAGE_SCRIPT } from './html-assets.js';
import { selfContainedPage } from './page.js';
import type { ReportData, RunReport, TableRow } from './report-model.js';
import { DELTA_COLUMNS, FAULT_COLUMNS, detailColumns, latencyColumns, measureNote, summaryColumns, workingSetPartsNote, type Column } from './table-columns.js';

export function renderHtml(data: ReportData, charts: ChartSpec[], extra: ExtraSection[] = []): string {
  const several = data.runs.length > 1;
  const first = data.runs[0]!;
  const title = several ? `attestorm comparison: ${data.runs.map((r) => r.label).join(' vs ')}` : `attestorm report: ${first.scenarioName}`;
  const body: string[] = [];
  body.push(`<h1>${escapeHtml(title)}</h1>`);
  body.push(`<p class="meta">${escapeHtml(metaLine(data))}</p>`);

  // What changed comes first when comparing runs; each run's own verdict and table follow.
  if (data.comparison && data.comparison.length > 0) {
    body.push('<h2 id="comparison">Comparison with the baseline</h2>');
    body.push(`<p>Baseline: <strong>${escapeHtml(first.label)}</strong>. Each later run, per variant: baseline → run: change (percent).</p>`);
    body.push(table(DELTA_COLUMNS, data.comparison, () => '', 'deltas'));
  }
  body.push(...runDifferencesHtml(data, (columns, rows, id) => table(columns, rows, () => '', id)));
  for (const run of data.runs) body.push(runSummary(run, several));
  for (const x of extra) body.push(`<h2>${escapeHtml(x.title)}</h2>\n${x.html}`);

  body.push('<h2 id="charts">Charts</h2>');
  if (charts.length === 0) body.push('<p>The run folder holds no samples to chart.</p>');
  // Not <noscript>: a browser that merely blocks scripts (CSP, extensions, test harnesses) still
  // skips that; the page script removes this note once the charts are drawn.
  if (charts.length > 0) {
    body.push('<p id="charts-need-js">The charts need JavaScript; the PNG files next to this report show the same charts.</p>');
  }
  body.push('<div class="charts">');
  for (const c of charts) {
    body.push(
      `<figure${c.time ? ' class="time-chart"' : ''}><div class="chart-box"><canvas id="chart-${escapeHtml(c.id)}" role="img" aria-label="${escapeHtml(c.description)}"></canvas></div>` +
        `<figcaption>${escapeHtml(c.description)}</figcaption></figure>`,
    );
  }
  body.push('</div>');
  body.push(latencySection(data));

  for (const run of data.runs) body.push(runDetails(run, several));

  return selfContainedPage({ title, body: body.join('\n'), data: { id: 'attestorm-charts', value: charts }, script: PAGE_SCRIPT, zoom: true });
}

/** Latency percentiles per variant and outcome: a table, where a chart of them was a wall of bars. */
function latencySection(data: ReportData): string {
  const rows = data.runs.flatMap((r) => r.latency);
  if (rows.length === 0) return '';
  const merged = rows.some((r) => r.source === 'samples');
  return [
    '<h3 id="latency">Latency per outcome</h3>',
    '<p>Call latency over the load phase, per variant and outcome (warm-up and drain left out).</p>',
    table(latencyColumns(data.runs.length > 1), rows, () => '', 'latency'),
    merged ? "<p>Some variants' figures are merged from the per-second histograms in the samples: results.json lacks them.</p>" : '',
  ].join('\n');
}

function metaLine(data: ReportData): string {
  return data.runs.map((r) => `${r.label}: ${r.status}, started ${r.startedAt}${r.endedAt ? `, ended ${r.endedAt}` : ''} (${r.tool})`).join(' · ');
}

function runSummary(run: RunReport, several: boolean): string {
  const out: string[] = [];
  if (several) out.push(`<h2 id="run-${escapeHtml(run.label)}">${escapeHtml(run.label)}: ${escapeHtml(run.scenarioName)}</h2>`);
  if (run.scenarioDescription) out.push(`<p>${escapeHtml(run.scenarioDescription)}</p>`);
  const v = run.verdict.runVerdict;
  const cls = v === 'compared' ? 'verdict compared' : !run.verdict.expectationsPassed ? 'verdict failed' : v === 'passed' ? 'verdict' : 'verdict inconclusive';
  out.push(`<p class="${cls}" data-testid="verdict"><strong>Verdict:</strong> ${escapeHtml(run.verdict.text)}</p>`);
  out.push(table(summaryColumns(run.memoryMeasure), run.rows, rowClass, 'variants'));
  out.push(`<p class="meta" data-testid="memory-measure">${escapeHtml(measureNote(run.memoryMeasure))}</p>`);
  const parts = workingSetPartsNote(run.rows);
  if (parts) out.push(`<p class="meta" data-testid="working-set-parts">${escapeHtml(parts)}</p>`);
  out.push(expectationsList(run.rows));
  out.push(`<details class="more"><summary>More figures per variant: agent, restarts, downtime, load generator CPU, latency</summary>`);
  out.push(table(detailColumns(run.rows, run.memoryMeasure), run.rows, rowClass, 'variant-details'), '</details>');
  if (run.faults.length > 0) {
    out.push(
      '<h3>Faults</h3>',
      '<p>Each fault as it ran (times from the moment the calls started) and how fast the agent and the bystanders recovered (bystander recovery: 1 s resolution, an upper bound).</p>',
    );
    out.push(table(FAULT_COLUMNS, run.faults, (r) => (r.error ? 'failed' : ''), 'faults'));
  }
  if (run.heap.length > 0) {
    out.push(`<h3>${escapeHtml(HEAP_TABLE_TITLE)}</h3>`);
    out.push(table(HEAP_COLUMNS, run.heap, () => '', 'spire-heap'));
    out.push(`<p class="meta">${escapeHtml(heapTableNote())}</p>`);
  }
  out.push(...spreadSectionHtml(run, (columns, rows, id) => table(columns, rows, () => '', id)));
  out.push(...fetchSectionsHtml(run, (columns, rows, id) => table(columns, rows, () => '', id)));
  if (run.clusterNodes.length > 0) {
    out.push('<h3 id="cluster">Cluster</h3>', `<p>${escapeHtml(CLUSTER_NOTE)}</p>`);
    out.push(table(CLUSTER_COLUMNS, run.clusterNodes, (r) => (r.storm.oomKills > 0 || r.quiet.oomKills > 0 ? 'failed' : ''), 'cluster'));
  }
  if (run.warnings.length > 0) {
    out.push(`<ul class="warn">${run.warnings.map((w) => `<li>${escapeHtml(w)}</li>`).join('')}</ul>`);
  }
  return out.join('\n');
}

function rowClass(row: TableRow): string {
  if (row.error !== null || row.expectationsFailed > 0) return 'failed';
  return row.expectationsInconclusive > 0 ? 'inconclusive' : 'passed';
}

const MARK = { passed: '✓', failed: '✗', inconclusive: '?' } as const;

function expectationItem(variant: string, e: TableRow['expectations'][number]): string {
  const cls = e.verdict === 'passed' ? 'pass' : e.verdict === 'failed' ? 'fail' : 'inconclusive';
  const verdict = e.verdict === 'passed' ? '' : ` <em>(${e.verdict})</em>`;
  return `<li class="${cls}">${MARK[e.verdict]} <strong>${escapeHtml(variant)}</strong> · <code>${escapeHtml(e.name)}</code>: ${escapeHtml(e.message)}${verdict}</li>`;
}

/**
 * The expectations under the table, where their sentences have the page's width: the failed and
 * inconclusive ones in view, the met ones one click away.
 */
function expectationsList(rows: TableRow[]): string {
  const all = rows.flatMap((r) => r.expectations.map((e) => ({ variant: r.variant, e })));
  if (all.length === 0) return '';
  const open = all.filter((x) => x.e.verdict !== 'passed');
  const met = all.filter((x) => x.e.verdict === 'passed');
  const out: string[] = [];
  if (open.length > 0) out.push(`<ul class="expect" data-testid="expectations-open">${open.map((x) => expectationItem(x.variant, x.e)).join('')}</ul>`);
  if (met.length > 0) {
    out.push(
      `<details class="more"><summary>${met.length} of ${all.length} expectations met</summary>` +
        `<ul class="expect" data-testid="expectations-met">${met.map((x) => expectationItem(x.variant, x.e)).join('')}</ul></details>`,
    );
  }
  return out.join('\n');
}

/** A table that reads as a table on a wide screen and as one card per row on a phone (CSS, via data-label). */
function table<R>(columns: Column<R>[], rows: R[], classOf: (row: R) => string, testId?: string): string {
  const body = rows
    .map((row) => {
      const cells = columns.map((c, i) => {
        const content = escapeHtml(c.cell(row));
        const label = ` data-label="${escapeHtml(c.group ? `${c.header} (${c.group})` : c.header)}"`;
        const cls = c.numeric ? ' class="num"' : c.nowrap ? ' class="nowrap"' : '';
        return i === 0 ? `<th scope="row"${label}>${content}</th>` : `<td${label}${cls}>${content}</td>`;
      });
      const cls = classOf(row);
      return `<tr${cls ? ` class="${cls}"` : ''}>${cells.join('')}</tr>`;
    })
    .join('\n');
  const attr = testId ? ` data-testid="${escapeHtml(testId)}"` : '';
  return `<div class="table-wrap"><table class="cards"${attr}><thead>${headerRows(columns)}</thead><tbody>\n${body}\n</tbody></table></div>`;
}

/** One header row, or two when columns share a group header (the group above, each column below it). */
function headerRows<R>(columns: Column<R>[]): string {
  if (!columns.some((c) => c.group)) return `<tr>${columns.map((c) => `<th scope="col">${escapeHtml(c.header)}</th>`).join('')}</tr>`;
  const top: string[] = [];
  const below: string[] = [];
  for (let i = 0; i < columns.length; i++) {
    const c = columns[i]!;
    if (!c.group) {
      top.push(`<th scope="col" rowspan="2">${escapeHtml(c.header)}</th>`);
      continue;
    }
    let n = 1;
    while (columns[i + n]?.group === c.group) n++;
    top.push(`<th scope="colgroup" colspan="${n}" class="group">${escapeHtml(c.group)}</th>`);
    for (const member of columns.slice(i, i + n)) below.push(`<th scope="col">${escapeHtml(member.header)}</th>`);
    i += n - 1;
  }
  return `<tr>${top.join('')}</tr><tr>${below.join('')}</tr>`;
}

function runDetails(run: RunReport, several: boolean): string {
  const suffix = several ? ` (${escapeHtml(run.label)})` : '';
  const out: string[] = [];
  out.push(`<h2>Scenario${suffix}</h2>`);
  if (run.scenarioWritten) {
    out.push(`<p>${run.scenarioFile ? `As written in <code>${escapeHtml(run.scenarioFile)}</code>` : 'As written'} (with the command's overrides):</p>`);
    out.push(`<pre data-testid="scenario-written"><code>${escapeHtml(toYaml(run.scenarioWritten, { lineWidth: 0 }))}</code></pre>`);
    out.push('<p>As run: every setting, in the same units; values the scenario did not give are marked <code># default</code>.</p>');
  } else if (run.scenarioFile) {
    out.push(`<p>From <code>${escapeHtml(run.scenarioFile)}</code>, with defaults applied:</p>`);
  }
  out.push(`<pre data-testid="scenario-resolved"><code>${escapeHtml(resolvedWithDefaults(run.scenarioResolved ?? {}, run.scenarioWritten))}</code></pre>`);

  out.push(`<h3>Environment and fidelity</h3>`);
  const env = run.environment;
  const fidelity =
    env['oomFidelity'] === 'cgroup-oom'
      ? 'real kernel OOM kills in a memory cgroup'
      : env['oomFidelity'] === 'emulated-oom'
        ? 'emulated: an RSS watchdog SIGKILLs the agent at the limit (no memory cgroup available)'
        : 'unknown';
  const entries: [string, unknown][] = [['OOM fidelity', fidelity], ...Object.entries(env).filter(([k]) => k !== 'oomFidelity')];
  out.push(`<dl class="env">${entries.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(formatValue(k, v))}</dd>`).join('')}</dl>`);

  out.push(`<h3>Modeled costs and behaviours in effect</h3>`);
  const costs = modeledCostsInWords(
    run.modeledCosts,
    run.rows.map((r) => r.variant),
  );
  out.push(
    costs.length === 0
      ? '<p>None: the reference agent ran with its defaults.</p>'
      : `<dl class="env">${costs.map((c) => `<dt>${escapeHtml(c.variants === null ? 'every variant' : c.variants.join(', '))}</dt><dd>${escapeHtml(c.text)}</dd>`).join('')}</dl>`,
  );

  out.push(`<h3>Rerun</h3>`);
  out.push(run.command ? `<pre><code>${escapeHtml(run.command)}</code></pre>` : '<p>The run folder does not record its command.</p>');
  return out.join('\n');
}

function formatValue(key: string, v: unknown): string {
  if (key === 'memoryBytes' && typeof v === 'number') return `${(v / 2 ** 30).toFixed(1)} GiB`;
  if (v === null || v === undefined) return '—';
  if (key === 'cgroupDelegation' && typeof v === 'object' && 'kind' in v && 'detail' in v) return `${String(v.kind)}: ${String(v.detail)}`;
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}
