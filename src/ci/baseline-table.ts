// The baseline verdict table, as aligned text for the console and as Markdown for summaries. One
// row per variant and figure: before → after, the change, the tolerance, the verdict and its rule.
import type { BaselineComparison, BaselineFigure } from './baseline.js';
import { figureDef } from './figures.js';

const HEAD = ['variant', 'figure', 'before', 'after', 'change', 'tolerance', 'verdict', 'rule'];

function valueText(fig: BaselineFigure, side: 'before' | 'after'): string {
  const def = figureDef(fig.figure);
  const r = side === 'before' ? fig.beforeRange : fig.afterRange;
  const reps = fig.repetitions[side];
  const med = def.format(r.median);
  return r.min === r.max && reps <= 1 ? med : `${med} (${def.format(r.min)}–${def.format(r.max)})`;
}

export function changeText(fig: BaselineFigure): string {
  const def = figureDef(fig.figure);
  const sign = fig.change > 0 ? '+' : fig.change < 0 ? '−' : '±';
  const abs = Math.abs(fig.change);
  if (def.kind === 'count') return `${sign}${+abs.toFixed(1)}`;
  if (def.kind === 'points') return `${sign}${(abs * 100).toFixed(1)} pt`;
  if (fig.changeRatio === null) return fig.change === 0 ? '±0' : `${sign}${def.format(abs)}`;
  return `${sign}${(Math.abs(fig.changeRatio) * 100).toFixed(1)}%`;
}

function verdictText(fig: BaselineFigure): string {
  const v = fig.verdict === 'regressed' ? 'REGRESSED' : fig.verdict;
  return fig.flag ? `${v} (flagged)` : v;
}

function rows(cmp: BaselineComparison): string[][] {
  return cmp.figures.map((f) => [f.variant, f.label, valueText(f, 'before'), valueText(f, 'after'), changeText(f), f.tolerance, verdictText(f), f.rule]);
}

export function headline(cmp: BaselineComparison): string {
  const base = `baseline ${cmp.from}${cmp.baselineCommit ? ` (commit ${cmp.baselineCommit.slice(0, 12)})` : ''}`;
  return `${base}: ${cmp.regressed} regressed, ${cmp.improved} improved, ${cmp.unchanged} unchanged`;
}

/** Aligned plain text for stderr. */
export function baselineTableText(cmp: BaselineComparison): string {
  const all = [HEAD, ...rows(cmp)];
  const widths = HEAD.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  const fmt = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  const sep = `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`;
  const lines = [headline(cmp), fmt(HEAD), sep, ...all.slice(1).map(fmt)];
  if (cmp.figures.length === 0) lines.push('(no figure could be compared)');
  for (const n of cmp.notes) lines.push(`note: ${n}`);
  return `${lines.join('\n')}\n`;
}

/** A Markdown table cell: pipes and newlines would break the row. */
export function mdCell(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

export function baselineTableMarkdown(cmp: BaselineComparison): string[] {
  const lines = [`| ${HEAD.join(' | ')} |`, `|${HEAD.map(() => '---').join('|')}|`];
  for (const r of rows(cmp)) {
    const cells = r.map(mdCell);
    if (r[6]!.startsWith('REGRESSED')) cells[6] = `**${cells[6]}**`;
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines;
}

/**
 * The table as an HTML fragment for report pages (regressed rows marked like failed variants).
 * The caller passes its escaper (src/report's escapeHtml), so this module needs nothing from src/report.
 */
export function baselineTableHtml(cmp: BaselineComparison, escape: (s: string) => string): string {
  const head = HEAD.map((h) => `<th scope="col">${escape(h)}</th>`).join('');
  const body = cmp.figures
    .map((f, i) => {
      const cells = rows({ ...cmp, figures: [f] })[0]!;
      const cls = f.verdict === 'regressed' ? 'failed' : f.verdict === 'improved' ? 'passed' : '';
      const tds = cells
        .map((c, j) => (j === 0 ? `<th scope="row">${escape(c)}</th>` : `<td${j >= 2 && j <= 4 ? ' class="num"' : ''}>${escape(c)}</td>`))
        .join('');
      return `<tr${cls ? ` class="${cls}"` : ''} data-figure="${escape(`${f.variant}/${f.figure}`)}" data-index="${i}">${tds}</tr>`;
    })
    .join('\n');
  const notes = cmp.notes.length ? `\n<ul class="warn">${cmp.notes.map((n) => `<li>${escape(n)}</li>`).join('')}</ul>` : '';
  return `<p>${escape(headline(cmp))}</p>\n<div class="table-wrap"><table data-testid="baseline"><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table></div>${notes}\n<p class="meta">${escape(cmp.rule)}</p>`;
}
