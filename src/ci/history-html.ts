// history.html: one self-contained page (Chart.js and the data inlined, the report's CSS and CSP) with
// peak memory, OOM kills and bystander success per variant across runs; commit and versions in the
// tooltips; runs a baseline gate against the previous run would have failed are marked.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { AttestormError } from '../errors.js';
import { escapeHtml, selfContainedPage } from '../report/index.js';
import { gateFailed, loadHistory, type HistoryModel, type HistoryOptions, type HistoryRun } from './history.js';

// Okabe–Ito: colour-blind-safe, one hue per variant on every chart.
const COLORS = ['#009E73', '#E69F00', '#CC79A7', '#0072B2', '#D55E00', '#56B4E9', '#000000', '#F0E442'];
const FAILED = '#b3261e';

interface HistoryChart {
  id: 'peak-memory' | 'oom-kills' | 'bystander-success';
  title: string;
  unit: string;
  description: string;
  config: unknown;
}

/** "2026-11-30 02:00" (UTC), the x-axis label of a run. */
function runLabel(run: HistoryRun): string {
  const d = new Date(run.startedAt);
  return Number.isNaN(d.getTime()) ? run.dir : d.toISOString().slice(0, 16).replace('T', ' ');
}

function shortCommit(run: HistoryRun): string {
  if (!run.commit) return 'no commit recorded';
  return `${run.commit.slice(0, 12)}${run.dirty ? ' (dirty)' : ''}`;
}

function gateText(run: HistoryRun): string {
  if (!run.gate) return 'first run: nothing to gate against';
  if ('refused' in run.gate) return `not gated: ${run.gate.refused}`;
  if (run.gate.regressions.length === 0) return `gate vs ${run.gate.against}: passed${run.gate.improved ? ` (${run.gate.improved} improved)` : ''}`;
  return `gate vs ${run.gate.against}: FAILED — ${run.gate.regressions.length} regressed`;
}

function buildCharts(m: HistoryModel): HistoryChart[] {
  const labels = m.runs.map(runLabel);
  const dataset = (variant: string, i: number, value: (run: HistoryRun) => number | null) => {
    // Marked where this variant regressed against the run before.
    const failed = m.runs.map((r) => gateFailed(r, variant));
    return {
      label: variant,
      data: m.runs.map((r) => (r.byVariant[variant]?.ran ? value(r) : null)),
      borderColor: COLORS[i % COLORS.length],
      backgroundColor: COLORS[i % COLORS.length],
      borderWidth: 2,
      spanGaps: true,
      tension: 0,
      pointStyle: failed.map((f) => (f ? 'triangle' : 'circle')),
      pointRadius: failed.map((f) => (f ? 8 : 3)),
      pointBorderColor: failed.map((f) => (f ? FAILED : COLORS[i % COLORS.length])),
      pointBorderWidth: failed.map((f) => (f ? 3 : 1)),
    };
  };
  const options = (yTitle: string, extra: Record<string, unknown> = {}) => ({
    interaction: { mode: 'index', intersect: false },
    plugins: { legend: { position: 'bottom' } },
    scales: {
      x: { title: { display: true, text: 'run start (UTC), oldest first' } },
      y: { title: { display: true, text: yTitle }, beginAtZero: true, ...extra },
    },
  });
  const charts: HistoryChart[] = [
    {
      id: 'peak-memory',
      title: 'Peak memory per variant',
      unit: 'MiB',
      description: `Peak memory of the agent (MiB) per variant, one point per run, ${m.runs.length} runs; triangles mark where a variant regressed against the run before (a baseline gate would have failed).`,
      config: {
        type: 'line',
        data: {
          labels,
          datasets: m.variants.map((v, i) =>
            dataset(v, i, (r) => (r.byVariant[v]!.peakMemoryBytes === null ? null : +(r.byVariant[v]!.peakMemoryBytes! / 2 ** 20).toFixed(2))),
          ),
        },
        options: options('MiB'),
      },
    },
    {
      id: 'oom-kills',
      title: 'OOM kills per variant',
      unit: 'kills',
      description: `Counted OOM kills per variant, one point per run, ${m.runs.length} runs.`,
      config: {
        type: 'line',
        data: { labels, datasets: m.variants.map((v, i) => dataset(v, i, (r) => r.byVariant[v]!.oomKills)) },
        options: options('OOM kills', { ticks: { precision: 0 } }),
      },
    },
  ];
  const withBystanders = m.variants.filter((v) => m.runs.some((r) => r.byVariant[v]?.bystanderSuccess != null));
  if (withBystanders.length > 0) {
    charts.push({
      id: 'bystander-success',
      title: 'Bystander success per variant',
      unit: '%',
      description: `Share of bystander calls that succeeded (%) per variant, one point per run; gaps where a run measured no bystanders.`,
      config: {
        type: 'line',
        data: {
          labels,
          datasets: withBystanders.map((v) =>
            dataset(v, m.variants.indexOf(v), (r) => {
              const s = r.byVariant[v]?.bystanderSuccess;
              return s == null ? null : +(s * 100).toFixed(2);
            }),
          ),
        },
        options: options('% of bystander calls ok', { max: 100 }),
      },
    });
  }
  return charts;
}

/** What the tooltips add under the values: which run, its commit and versions, its gate. */
function tooltipRuns(m: HistoryModel) {
  return m.runs.map((r) => ({
    dir: r.dir,
    commit: shortCommit(r),
    tool: r.toolVersion,
    agents: Object.fromEntries(Object.entries(r.byVariant).map(([k, p]) => [k, p.agentVersion])),
    gate: gateText(r),
  }));
}

const HISTORY_SCRIPT = `
(function () {
  var el = document.getElementById('attestorm-history');
  if (!el || typeof Chart === 'undefined') return;
  var data = JSON.parse(el.textContent);
  data.charts.forEach(function (spec) {
    var canvas = document.getElementById('chart-' + spec.id);
    if (!canvas) return;
    var config = spec.config;
    config.options.responsive = true;
    config.options.maintainAspectRatio = false;
    config.options.animation = false;
    config.options.plugins.tooltip = {
      callbacks: {
        label: function (item) {
          var v = item.parsed.y;
          return item.dataset.label + ': ' + (typeof v === 'number' ? (Math.abs(v) >= 100 ? v.toFixed(0) : +v.toFixed(2)) : '–') + ' ' + spec.unit;
        },
        afterBody: function (items) {
          if (!items.length) return [];
          var run = data.runs[items[0].dataIndex];
          var lines = ['', 'run ' + run.dir, 'commit ' + run.commit, 'attestorm ' + run.tool];
          items.forEach(function (it) {
            var v = run.agents[it.dataset.label];
            if (v) lines.push(it.dataset.label + ' agent ' + v);
          });
          lines.push(run.gate);
          return lines;
        }
      }
    };
    new Chart(canvas, config);
  });
  var note = document.getElementById('charts-need-js');
  if (note) note.remove();
})();
`;

function runsTable(m: HistoryModel): string {
  const head = [
    'run',
    'started (UTC)',
    'commit',
    'attestorm',
    'agents',
    'status',
    'verdict',
    ...m.variants.map((v) => `${v}: peak / OOM kills`),
    'baseline gate vs previous run',
  ];
  const rows = m.runs.map((r) => {
    const agents =
      [
        ...new Set(
          Object.values(r.byVariant)
            .map((p) => p.agentVersion)
            .filter(Boolean),
        ),
      ].join(', ') || '—';
    const cells = m.variants.map((v) => {
      const p = r.byVariant[v];
      if (!p) return '<td>—</td>';
      if (!p.ran) return '<td>did not run</td>';
      return `<td class="num">${p.peakMemoryBytes === null ? 'unmeasured' : `${(p.peakMemoryBytes / 2 ** 20).toFixed(1)} MiB`} / ${p.oomKills}</td>`;
    });
    let gate = escapeHtml(gateText(r));
    if (r.gate && 'regressions' in r.gate && r.gate.regressions.length > 0) {
      gate += `<ul class="expect">${r.gate.regressions.map((x) => `<li class="fail">✗ ${escapeHtml(x)}</li>`).join('')}</ul>`;
    }
    const cls = gateFailed(r) ? 'failed' : r.verdict === 'failed' ? '' : 'passed';
    return (
      `<tr class="${cls}" data-dir="${escapeHtml(r.dir)}"><th scope="row">${escapeHtml(r.dir)}</th><td>${escapeHtml(runLabel(r))}</td>` +
      `<td title="${escapeHtml(r.commit ?? '')}"><code>${escapeHtml(shortCommit(r))}</code></td><td>${escapeHtml(r.toolVersion)}</td><td>${escapeHtml(agents)}</td>` +
      `<td>${escapeHtml(r.status)}${r.upgradedFrom !== null ? ` <small>(schemaVersion ${r.upgradedFrom}, converted)</small>` : ''}</td><td>${escapeHtml(r.verdict)}</td>${cells.join('')}<td>${gate}</td></tr>`
    );
  });
  return `<div class="table-wrap"><table data-testid="history-runs"><thead><tr>${head.map((h) => `<th scope="col">${escapeHtml(h)}</th>`).join('')}</tr></thead><tbody>\n${rows.join('\n')}\n</tbody></table></div>`;
}

export function renderHistoryHtml(m: HistoryModel): string {
  const charts = buildCharts(m);
  const failed = m.runs.filter((r) => gateFailed(r));
  const title = `attestorm history: ${m.scenario}`;
  const first = m.runs[0]!;
  const last = m.runs[m.runs.length - 1]!;
  const body: string[] = [];
  body.push(`<h1>${escapeHtml(title)}</h1>`);
  body.push(
    `<p class="meta">${m.runs.length} runs from ${escapeHtml(runLabel(first))} to ${escapeHtml(runLabel(last))} UTC, read from ${escapeHtml(m.folder)}. Gate tolerance: ${escapeHtml(m.tolerance)}.</p>`,
  );
  const verdict =
    failed.length === 0
      ? `No run would have failed a baseline gate against the run before it.`
      : `${failed.length} of ${m.runs.length - 1} gated runs would have failed a baseline gate against the run before it: ${failed.map((r) => r.dir).join(', ')}.`;
  body.push(`<p class="${failed.length ? 'verdict failed' : 'verdict'}" data-testid="verdict"><strong>Trend:</strong> ${escapeHtml(verdict)}</p>`);
  body.push('<h2 id="charts">Charts</h2>');
  body.push('<p id="charts-need-js">The charts need JavaScript; the table below has every figure.</p>');
  body.push('<div class="charts">');
  for (const c of charts) {
    body.push(
      `<figure><div class="chart-box"><canvas id="chart-${c.id}" role="img" aria-label="${escapeHtml(c.description)}"></canvas></div><figcaption><strong>${escapeHtml(c.title)}.</strong> ${escapeHtml(c.description)}</figcaption></figure>`,
    );
  }
  body.push('</div>');
  body.push('<h2 id="runs">Runs</h2>');
  body.push(runsTable(m));
  if (m.skipped.length > 0) {
    body.push('<h3>Left out</h3>');
    body.push(`<ul class="warn">${m.skipped.map((s) => `<li>${escapeHtml(s)}</li>`).join('')}</ul>`);
  }
  return selfContainedPage({
    title,
    body: body.join('\n'),
    data: { id: 'attestorm-history', value: { charts, runs: tooltipRuns(m) } },
    script: HISTORY_SCRIPT,
  });
}

/** Reads the run folders under `folder` and writes history.html and history.json into `outDir` (default <folder>/history). */
export function writeHistory(folder: string, opts: HistoryOptions & { outDir?: string } = {}): { files: string[]; model: HistoryModel } {
  const model = loadHistory(folder, opts);
  const outDir = path.resolve(opts.outDir ?? path.join(folder, 'history'));
  const files: string[] = [];
  try {
    mkdirSync(outDir, { recursive: true });
    const html = path.join(outDir, 'history.html');
    writeFileSync(html, renderHistoryHtml(model));
    files.push(html);
    const json = path.join(outDir, 'history.json');
    writeFileSync(json, `${JSON.stringify(model, null, 2)}\n`);
    files.push(json);
  } catch (err) {
    throw new AttestormError('ATTESTORM_ERR_IO', `cannot write the history report into ${outDir}: ${(err as Error).message}`, { cause: err });
  }
  return { files, model };
}
