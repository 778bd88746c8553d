// A compact Markdown summary for CI job pages (GitHub's $GITHUB_STEP_SUMMARY): verdict, one row per
// variant, the baseline's regressions and improvements, the time charts (Mermaid) and where the
// artifacts are. `attestorm run` is its only writer: once per run. GitHub refuses a
// step summary over 1 MiB, so what is appended is cut to fit, with a note saying so.
import { appendFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { judgementOf, judgementSentence, type RunResults, type VariantResult } from '../contract/index.js';
import type { BaselineComparison } from './baseline.js';
import { baselineTableMarkdown, headline, mdCell } from './baseline-table.js';
import { bystandersOf } from './figures.js';

export const STEP_SUMMARY_LIMIT = 1024 * 1024;

export interface StepSummaryInput {
  results: RunResults;
  baseline?: BaselineComparison | null;
  runDir: string;
  /** Artifact files to point at (shown relative to the working folder, never as the runner's absolute paths). */
  artifacts?: { label: string; path: string }[];
  /** The run's time charts as Mermaid blocks (GitHub draws them; no image to host). */
  charts?: string[];
  env?: NodeJS.ProcessEnv;
  /** The folder paths are shown relative to (default: the working folder, the checkout in CI). */
  cwd?: string;
}

/**
 * A path as it reads on a job page: relative to the working folder (the checkout) when inside it,
 * else its name alone — a runner's absolute paths mean nothing to a reader.
 */
export function shownPath(p: string, cwd = process.cwd()): string {
  if (!path.isAbsolute(p)) return p;
  const rel = path.relative(cwd, p);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : path.basename(p);
}

const mib = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;

/** The run's verdict as a job page or a comment leads with it: a regression fails a run that passed. */
export function verdictMark(r: RunResults, cmp: BaselineComparison | null | undefined): string {
  if (r.status !== 'complete') return `🛑 ${r.status}`;
  if (r.verdict === 'failed' || (cmp?.regressed ?? 0) > 0) return '❌ failed';
  if (r.verdict === 'inconclusive') return '⚠️ inconclusive';
  if (r.verdict === 'compared') return 'ℹ️ compared (no expectation judged)';
  return '✅ passed';
}

function variantRow(v: VariantResult): string {
  if (v.error !== undefined) return `| ${mdCell(v.name)} | ${mdCell(v.agent.kind)} | did not run: ${mdCell(v.error)} | | | | | | | |`;
  const b = bystandersOf(v);
  const pass = v.expectations.filter((e) => e.verdict === 'passed').length;
  const limit = v.memoryLimitBytes ? ` of ${mib(v.memoryLimitBytes)}` : '';
  const cells = [
    v.name,
    [v.agent.kind, v.agent.version, v.agent.placement].filter(Boolean).join(' '),
    v.peakMemoryBytes === null ? `unmeasured${limit}` : `${mib(v.peakMemoryBytes)}${limit}`,
    String(v.oomKills),
    String(v.restarts),
    v.okRps.toFixed(1),
    v.rejectedRps.toFixed(1),
    v.latency.ok ? `${v.latency.ok.p99Ms.toFixed(1)} ms` : '–',
    b ? `${(b.successRatio * 100).toFixed(1)}%` : '–',
    v.expectations.length ? `${pass}/${v.expectations.length} ${v.verdict}` : '–',
  ];
  return `| ${cells.map(mdCell).join(' | ')} |`;
}

/** One list item per expectation that failed or was inconclusive. */
export function unmetExpectations(r: RunResults): string[] {
  return r.variants.flatMap((v) =>
    v.expectations
      .filter((e) => e.verdict !== 'passed')
      .map((e) => `- ${e.verdict === 'failed' ? '❌' : '⚠️'} **${mdCell(v.name)}** ${mdCell(e.name)}: ${mdCell(e.message)}`),
  );
}

/** The link to the workflow run's uploaded artifacts, when running in GitHub Actions. */
export function artifactsLink(env: NodeJS.ProcessEnv): string | null {
  const server = env['GITHUB_SERVER_URL'];
  const repo = env['GITHUB_REPOSITORY'];
  const runId = env['GITHUB_RUN_ID'];
  return server && repo && runId ? `${server}/${repo}/actions/runs/${runId}#artifacts` : null;
}

export function renderStepSummary(input: StepSummaryInput): string {
  const { results: r, baseline: cmp } = input;
  const env = input.env ?? process.env;
  const shown = (p: string) => shownPath(p, input.cwd);
  const lines: string[] = [];
  lines.push(`### ${verdictMark(r, cmp)} — attestorm ${mdCell(r.scenario.name)}`, '');
  const reps = Math.max(0, ...r.variants.map((v) => v.runDirs.length));
  const facts = [
    `${r.variants.length} variant${r.variants.length === 1 ? '' : 's'}`,
    `${reps} repetition${reps === 1 ? '' : 's'}`,
    `verdict ${r.verdict}`,
    `status ${r.status}`,
  ];
  if (cmp) facts.push(`baseline: ${cmp.regressed} regressed, ${cmp.improved} improved, ${cmp.unchanged} unchanged`);
  lines.push(facts.join(' · '), '');
  lines.push(mdCell(judgementSentence(r.judgement ?? judgementOf(r.variants, r.droppedExpectations))), '');
  lines.push('| variant | agent | peak memory | OOM kills | restarts | ok/s | rejected/s | p99 ok | bystander success | expectations |');
  lines.push('|---|---|---|---|---|---|---|---|---|---|');
  for (const v of r.variants) lines.push(variantRow(v));
  const failed = unmetExpectations(r);
  if (failed.length > 0) lines.push('', ...failed);

  if (cmp) {
    lines.push('', `#### ${mdCell(headline({ ...cmp, from: shown(cmp.from) }))}`, '');
    const changed = { ...cmp, figures: cmp.figures.filter((f) => f.verdict !== 'unchanged' || f.flag) };
    if (changed.figures.length > 0) lines.push(...baselineTableMarkdown(changed), '');
    if (cmp.unchanged > 0)
      lines.push(
        `${cmp.unchanged} figure${cmp.unchanged === 1 ? '' : 's'} unchanged within tolerance (all ${cmp.figures.length} are in results.json → baseline).`,
        '',
      );
    for (const n of cmp.notes) lines.push(`- note: ${mdCell(n)}`);
    lines.push('', `<details><summary>Rule</summary>\n\n${cmp.rule}\n\n</details>`);
  }

  if (input.charts && input.charts.length > 0) lines.push('', ...input.charts);

  lines.push('', '**Artifacts**', '', `- run folder: \`${shown(input.runDir)}\``);
  for (const a of input.artifacts ?? []) lines.push(`- ${a.label}: \`${shown(a.path)}\``);
  const link = artifactsLink(env);
  if (link) lines.push(`- [this workflow run's uploaded artifacts](${link})`);
  return `${lines.join('\n')}\n\n`;
}

export interface AppendResult {
  file: string;
  bytes: number;
  truncated: boolean;
  /** Set when nothing was written (the file is already at the limit). */
  skipped?: string;
}

/** What the note of a cut text calls the text and the limit. */
export interface CutNote {
  what: string;
  limit: string;
}

const STEP_SUMMARY_CUT: CutNote = { what: 'Summary', limit: "GitHub's 1 MiB step-summary limit" };

/**
 * Cuts `markdown` at a line boundary so that it fits in `budget` bytes, ending with a note. Whole
 * lines only: a half table row would render as garbage.
 */
export function fitMarkdown(markdown: string, budget: number, where: string, cut: CutNote = STEP_SUMMARY_CUT): { text: string; truncated: boolean } {
  if (Buffer.byteLength(markdown) <= budget) return { text: markdown, truncated: false };
  const lines = markdown.split('\n');
  const note = (dropped: number) => `\n\n> ✂️ ${cut.what} cut to stay under ${cut.limit}: ${dropped} more lines; everything is in ${where}.\n\n`;
  let used = Buffer.byteLength(note(lines.length));
  let kept = 0;
  for (; kept < lines.length; kept++) {
    const size = Buffer.byteLength(lines[kept]!) + 1;
    if (used + size > budget) break;
    used += size;
  }
  return { text: `${lines.slice(0, kept).join('\n')}${note(lines.length - kept)}`, truncated: true };
}

/** Appends to `file` (the $GITHUB_STEP_SUMMARY file or --step-summary), keeping the file under the limit. */
export function appendStepSummary(file: string, markdown: string, where: string, limit = STEP_SUMMARY_LIMIT): AppendResult {
  let existing: number;
  try {
    existing = statSync(file).size;
  } catch {
    existing = 0;
  }
  const budget = limit - existing;
  const MIN_USEFUL = 512;
  if (budget < MIN_USEFUL) return { file, bytes: 0, truncated: true, skipped: `${file} already holds ${existing} bytes of the ${limit}-byte limit` };
  const { text, truncated } = fitMarkdown(markdown, budget, where);
  appendFileSync(file, text);
  return { file, bytes: Buffer.byteLength(text), truncated };
}
