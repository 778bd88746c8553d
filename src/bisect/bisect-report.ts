// bisect.md and bisect.html from bisect.json alone: the range, every step (commit, subject, mark,
// verdict, peak, OOM kills, ok/s, kubelet requests/s, its time and folder) and the outcome. The
// HTML is self-contained like the run report (Chart.js inlined: each step's peak, by mark).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { escapeHtml, selfContainedPage } from '../report/index.js';
import type { BisectState, BisectStep } from './bisect-state.js';
import { outcomeSentence } from './outcome.js';

const MiB = 2 ** 20;
const MARK_COLOR = { good: '#009E73', bad: '#D55E00', skip: '#999999' } as const;

/** One row of the table, as text: both renderers show the same cells. */
interface Row {
  step: BisectStep;
  cells: string[];
}

const HEADERS = ['step', 'commit', 'subject', 'mark', 'verdict', 'peak MiB', 'OOM kills', 'ok/s', 'kubelet req/s', 'build s', 'run s', 'why'];

function rows(state: BisectState): Row[] {
  return state.steps.map((s) => {
    const f = s.figures;
    return {
      step: s,
      cells: [
        String(s.n),
        s.commit.slice(0, 9),
        s.subject,
        s.mark,
        s.verdict ?? '—',
        f?.peakMemoryBytes != null ? `${f.oomKills > 0 ? '≥ ' : ''}${(f.peakMemoryBytes / MiB).toFixed(1)}` : '—',
        f ? String(f.oomKills) : '—',
        f ? f.okRps.toFixed(1) : '—',
        f?.kubeletRequestsPerSecond != null ? f.kubeletRequestsPerSecond.toFixed(2) : '—',
        s.build.seconds.toFixed(0),
        s.runSeconds === null ? '—' : s.runSeconds.toFixed(0),
        s.reason,
      ],
    };
  });
}

function rangeText(state: BisectState): string {
  const { good, bad } = state.settings;
  const name = (r: { ref: string; commit: string }) => (r.commit.startsWith(r.ref) ? r.commit.slice(0, 9) : `${r.ref} (${r.commit.slice(0, 9)})`);
  return `good ${name(good)} .. bad ${name(bad)}, ${state.rangeCommits} commit${state.rangeCommits === 1 ? '' : 's'}`;
}

function statusText(state: BisectState): string {
  if (state.status === 'complete' && state.outcome) return outcomeSentence(state.outcome);
  const detail = state.statusDetail ? `: ${state.statusDetail}` : '';
  if (state.status === 'running') return `running (step ${state.current?.n ?? state.steps.length + 1} under way)`;
  return `${state.status}${detail}`;
}

const facts = (state: BisectState) => [
  [
    'scenario',
    `${state.settings.scenario}, variant ${state.settings.variant}${state.settings.repetitions ? `, ${state.settings.repetitions} repetitions a step` : ''}`,
  ],
  ['source', state.settings.source],
  ['range', rangeText(state)],
  ['build', state.settings.build.kind === 'spire' ? "SPIRE's go build" : `sh -c ${state.settings.build.command}`],
  ['command', state.command],
  ['started', `${state.startedAt}${state.endedAt ? `, ended ${state.endedAt}` : ''}`],
];

export function renderBisectMarkdown(state: BisectState): string {
  const md = (t: string) => t.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const lines = [
    `# attestorm bisect: ${state.settings.variant} of ${state.settings.scenario.split('/').pop()}`,
    '',
    `**${md(statusText(state))}**`,
    '',
    ...facts(state).map(([k, v]) => `- ${k}: \`${md(v!)}\``),
    '',
    `| ${HEADERS.join(' | ')} |`,
    `|${HEADERS.map(() => '---').join('|')}|`,
    ...rows(state).map((r) => `| ${r.cells.map(md).join(' | ')} |`),
  ];
  if (state.outcome?.kind === 'candidates')
    lines.push('', 'Candidates (git cannot tell them apart: skipped):', '', ...state.outcome.commits.map((c) => `- ${c.commit} ${md(c.subject)}`));
  if (state.unfinished.length)
    lines.push(
      '',
      `Unfinished attempts (interrupted, folders kept, tested again): ${state.unfinished.map((a) => `${a.n} (${a.commit.slice(0, 9)}, ${a.folder})`).join(', ')}`,
    );
  lines.push('', "Each step's folder is under `steps/`: build.log, and the run folder (`attestorm report <folder>` renders it again).", '');
  return lines.join('\n');
}

function chartSpec(state: BisectState): unknown[] {
  const steps = state.steps.filter((s) => s.figures?.peakMemoryBytes != null);
  return [
    {
      id: 'bisect-peaks',
      config: {
        type: 'bar',
        data: {
          labels: steps.map((s) => `${s.n}: ${s.commit.slice(0, 9)}`),
          datasets: [
            {
              label: 'peak MiB (OOM-killed: at least)',
              data: steps.map((s) => s.figures!.peakMemoryBytes! / MiB),
              backgroundColor: steps.map((s) => MARK_COLOR[s.mark]),
            },
          ],
        },
        options: {
          plugins: { title: { display: true, text: 'Peak memory per step (green good, red bad, grey skipped)' } },
          scales: { y: { beginAtZero: true } },
        },
      },
    },
  ];
}

const SCRIPT = `
(function () {
  var el = document.getElementById('attestorm-bisect');
  if (!el || typeof Chart === 'undefined') return;
  JSON.parse(el.textContent).forEach(function (s) {
    var canvas = document.getElementById('chart-' + s.id);
    if (!canvas) return;
    s.config.options.responsive = true; s.config.options.maintainAspectRatio = false; s.config.options.animation = false;
    new Chart(canvas, s.config);
  });
})();
`;

export function renderBisectHtml(state: BisectState): string {
  const table = rows(state)
    .map((r) => {
      const cls = r.step.mark === 'bad' ? 'failed' : r.step.mark === 'good' ? 'passed' : '';
      const cells = r.cells.map((c, i) =>
        i === 1 ? `<td><code title="${escapeHtml(r.step.commit)}">${escapeHtml(c)}</code></td>` : `<td>${escapeHtml(c)}</td>`,
      );
      const folder = r.step.runDir
        ? `<td><a href="${escapeHtml(r.step.runDir)}/">${escapeHtml(r.step.runDir)}</a></td>`
        : `<td><code>${escapeHtml(r.step.folder)}</code></td>`;
      return `<tr class="${cls}">${cells.join('')}${folder}</tr>`;
    })
    .join('\n');
  const candidates =
    state.outcome?.kind === 'candidates'
      ? `<h2>Candidates</h2><ul data-testid="candidates">${state.outcome.commits.map((c) => `<li><code>${escapeHtml(c.commit)}</code> ${escapeHtml(c.subject)}</li>`).join('')}</ul>`
      : '';
  const body = `<h1>attestorm bisect: ${escapeHtml(state.settings.variant)} of ${escapeHtml(state.settings.scenario.split('/').pop() ?? '')}</h1>
<p class="verdict ${state.outcome?.kind === 'first-bad' ? 'failed' : ''}" data-testid="outcome"><strong>${escapeHtml(statusText(state))}</strong></p>
<ul class="meta">${facts(state)
    .map(([k, v]) => `<li>${escapeHtml(k!)}: <code>${escapeHtml(v!)}</code></li>`)
    .join('')}</ul>
${candidates}
<h2>Steps</h2>
<div class="table-wrap"><table data-testid="bisect-steps"><thead><tr>${[...HEADERS, 'folder'].map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr></thead><tbody>
${table}
</tbody></table></div>
<div class="charts"><figure><div class="chart-box"><canvas id="chart-bisect-peaks"></canvas></div></figure></div>`;
  return selfContainedPage({
    title: `attestorm bisect: ${state.settings.variant}`,
    body,
    data: { id: 'attestorm-bisect', value: chartSpec(state) },
    script: SCRIPT,
  });
}

/** Writes bisect.md and bisect.html into the bisect's folder; returns their paths. */
export function writeBisectReports(dir: string, state: BisectState): string[] {
  const md = join(dir, 'bisect.md');
  const html = join(dir, 'bisect.html');
  writeFileSync(md, renderBisectMarkdown(state));
  writeFileSync(html, renderBisectHtml(state));
  return [md, html];
}
