// The sweep's report.html: peak memory against the swept value, one line per variant (min–max when
// repeated), OOM kills marked, the boundary per variant, and the table of every point. Self-contained
// like the run report: Chart.js inlined, nothing fetched.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { escapeHtml, selfContainedPage } from '../report/index.js';
import { MEASURE_WORDS } from '../contract/index.js';
import type { SweepPoint, SweepResult } from './sweep-result.js';
import { sweepOrder } from './sweep-result.js';
import { numericValue } from './vary.js';

const COLORS = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#F0E442', '#000000'];
const MiB = 2 ** 20;

function chartSpecs(r: SweepResult): unknown[] {
  const order = sweepOrder([...new Set(r.points.map((p) => p.value))], numericValue);
  const x = (p: SweepPoint) => order.indexOf(p.value);
  const variants = [...new Set(r.points.map((p) => p.variant))];
  const datasets: unknown[] = [];
  variants.forEach((v, i) => {
    const pts = r.points.filter((p) => p.variant === v && !p.error).sort((a, b) => x(a) - x(b));
    const color = COLORS[i % COLORS.length];
    datasets.push({
      type: 'line',
      label: `${v} peak`,
      data: pts.map((p) => ({ x: x(p), y: p.peakMemoryBytes === null ? null : p.peakMemoryBytes / MiB })),
      borderColor: color,
      backgroundColor: color,
      pointRadius: 3,
    });
    if (pts.some((p) => p.peakMinBytes !== p.peakMaxBytes)) {
      datasets.push({
        type: 'line',
        label: `${v} min–max`,
        data: pts.map((p) => ({ x: x(p), y: p.peakMaxBytes === null ? null : p.peakMaxBytes / MiB })),
        borderColor: color,
        backgroundColor: `${color}33`,
        borderWidth: 0,
        pointRadius: 0,
        fill: '+1',
      });
      datasets.push({
        type: 'line',
        label: `${v} min`,
        data: pts.map((p) => ({ x: x(p), y: p.peakMinBytes === null ? null : p.peakMinBytes / MiB })),
        borderColor: color,
        borderWidth: 0,
        pointRadius: 0,
      });
    }
    const killed = pts.filter((p) => p.oomKills > 0);
    if (killed.length)
      datasets.push({
        type: 'scatter',
        label: `${v} OOM-killed`,
        data: killed.map((p) => ({ x: x(p), y: p.peakMemoryBytes === null ? null : p.peakMemoryBytes / MiB })),
        borderColor: '#D00000',
        backgroundColor: color,
        pointStyle: 'crossRot',
        pointRadius: 10,
        borderWidth: 3,
      });
  });
  const bystanders = r.points.some((p) => p.bystanderSuccess !== null);
  const specs: unknown[] = [
    {
      id: 'sweep-peak',
      unit: 'MiB',
      config: {
        type: 'line',
        data: { datasets },
        options: {
          parsing: false,
          plugins: {
            title: { display: true, text: `Peak ${sweepMeasureWords(r)} against ${r.key}` },
            legend: { position: 'bottom', labels: { usePointStyle: true } },
          },
          scales: {
            x: { type: 'linear', ticks: { stepSize: 1, callback: `__labels__` }, title: { display: true, text: r.key } },
            y: { beginAtZero: true, title: { display: true, text: 'MiB' } },
          },
        },
      },
      labels: order,
    },
  ];
  if (bystanders) {
    specs.push({
      id: 'sweep-bystanders',
      unit: '',
      labels: order,
      config: {
        type: 'line',
        data: {
          datasets: variants.map((v, i) => ({
            label: `${v} bystander success`,
            data: r.points
              .filter((p) => p.variant === v && p.bystanderSuccess !== null)
              .sort((a, b) => x(a) - x(b))
              .map((p) => ({ x: x(p), y: p.bystanderSuccess })),
            borderColor: COLORS[i % COLORS.length],
            backgroundColor: COLORS[i % COLORS.length],
          })),
        },
        options: {
          parsing: false,
          plugins: { title: { display: true, text: `Bystander success against ${r.key}` } },
          scales: { x: { type: 'linear', ticks: { stepSize: 1, callback: '__labels__' }, title: { display: true, text: r.key } }, y: { min: 0, max: 1 } },
        },
      },
    });
  }
  return specs;
}

// Draws the charts. Tick labels are the swept values: functions cannot travel through JSON, so the
// marker '__labels__' becomes a lookup here.
const SWEEP_SCRIPT = `
(function () {
  var el = document.getElementById('attestorm-charts');
  if (!el || typeof Chart === 'undefined') return;
  JSON.parse(el.textContent).forEach(function (s) {
    var canvas = document.getElementById('chart-' + s.id);
    if (!canvas) return;
    var o = s.config.options;
    var ticks = o.scales.x.ticks;
    if (ticks && ticks.callback === '__labels__') ticks.callback = function (v) { return Number.isInteger(v) ? (s.labels[v] || '') : ''; };
    o.responsive = true; o.maintainAspectRatio = false; o.animation = false;
    new Chart(canvas, s.config);
  });
})();
`;

export function renderSweepHtml(r: SweepResult): string {
  const order = sweepOrder([...new Set(r.points.map((p) => p.value))], numericValue);
  const status =
    r.status === 'complete'
      ? 'complete'
      : `${r.status === 'running' ? 'interrupted (its runner stopped before the end)' : r.status}: only the finished points are shown`;
  const rows = [...r.points]
    .sort((a, b) => order.indexOf(a.value) - order.indexOf(b.value) || a.variant.localeCompare(b.variant))
    .map(
      (p) =>
        `<tr class="${p.oomKills > 0 ? 'failed' : 'passed'}"><th>${escapeHtml(p.value)}</th><td>${escapeHtml(p.variant)}</td><td class="num">${p.peakMemoryBytes === null ? 'unmeasured' : (p.peakMemoryBytes / MiB).toFixed(1)}${p.peakMinBytes !== null && p.peakMaxBytes !== null && p.peakMinBytes !== p.peakMaxBytes ? ` [${(p.peakMinBytes / MiB).toFixed(1)}–${(p.peakMaxBytes / MiB).toFixed(1)}]` : ''}</td><td class="num">${(p.memoryLimitBytes / MiB).toFixed(0)}</td><td class="num">${p.oomKills}</td><td class="num">${p.okRps.toFixed(1)}</td><td class="num">${p.bystanderSuccess === null ? '—' : `${(100 * p.bystanderSuccess).toFixed(0)}%`}</td><td>${escapeHtml(p.verdict)}${p.error ? ` — ${escapeHtml(p.error)}` : ''}</td><td><code>${escapeHtml(p.runDir)}</code></td></tr>`,
    )
    .join('\n');
  const bounds = Object.entries(r.boundaries)
    .map(
      ([v, b]) =>
        `<li><strong>${escapeHtml(v)}</strong>: ${b === null ? 'never OOM-killed in this sweep' : `first OOM-killed at ${escapeHtml(r.key)} = ${escapeHtml(b)}${r.lastKilled[v] && r.lastKilled[v] !== b ? `, last at ${escapeHtml(r.lastKilled[v]!)}` : ''}`}</li>`,
    )
    .join('');
  const specs = chartSpecs(r);
  const body = `<h1>attestorm sweep: ${escapeHtml(r.scenario)} over ${escapeHtml(r.key)}</h1>
<p class="meta">${escapeHtml(r.mode === 'bisect' ? 'bisection for the OOM boundary' : 'grid')} · values ${escapeHtml(order.join(', '))} · ${escapeHtml(status)} · started ${escapeHtml(r.startedAt)}</p>
<h2>Where each variant dies</h2>
<ul data-testid="boundaries">${bounds}</ul>
<h2>Charts</h2>
<div class="charts">${specs.map((s) => `<figure><div class="chart-box"><canvas id="chart-${escapeHtml((s as { id: string }).id)}"></canvas></div></figure>`).join('')}</div>
<h2>Points</h2>
<div class="table-wrap"><table data-testid="sweep-points"><thead><tr><th>${escapeHtml(r.key)}</th><th>variant</th><th>peak ${escapeHtml(sweepMeasureWords(r))} MiB</th><th>limit MiB</th><th>OOM kills</th><th>ok/s</th><th>bystanders</th><th>verdict</th><th>run folder</th></tr></thead><tbody>
${rows}
</tbody></table></div>`;
  return selfContainedPage({
    title: `attestorm sweep: ${r.scenario} over ${r.key}`,
    body,
    data: { id: 'attestorm-charts', value: specs },
    script: SWEEP_SCRIPT,
  });
}

export function writeSweepReport(dir: string, r: SweepResult): string {
  const file = join(dir, 'report.html');
  writeFileSync(file, renderSweepHtml(r));
  return file;
}

/** The measure of a sweep's peaks in words: its points' (older sweep.json files recorded usage). */
function sweepMeasureWords(r: SweepResult): string {
  return MEASURE_WORDS[r.points.find((p) => p.memoryMeasure)?.memoryMeasure ?? 'usage'];
}
