// The body of a pull-request comment on a run (`attestorm comment`): the verdict, each variant's
// figures — against a baseline, with the gate's own changes and verdicts — a compact memory chart,
// and a hidden marker by which a workflow finds its earlier comment and updates it. Cut to stay
// under GitHub's limit on a comment's length.
import path from 'node:path';
import { ConfigError } from '../errors.js';
import { RESULTS_SCHEMA_VERSION, type RunResults, type VariantResult } from '../contract/index.js';
import { mermaidChartsOf } from '../report/index.js';
import { compareWithBaseline, type BaselineComparison, type BaselineFigure, type FigureVerdict } from './baseline.js';
import { baselineTableMarkdown, changeText, headline, mdCell } from './baseline-table.js';
import { FIGURES } from './figures.js';
import { readResultsFile } from './results-file.js';
import { artifactsLink, fitMarkdown, shownPath, unmetExpectations, verdictMark } from './step-summary.js';
import { parseTolerances } from './tolerance.js';

/** GitHub refuses a comment body over 65,536 characters; measured here in UTF-8 bytes, never fewer. */
export const COMMENT_LIMIT = 65_536;

/** Points per line of the comment's memory chart: its shape, in a block that stays short. */
export const COMMENT_CHART_POINTS = 30;

const MARKER = 'attestorm-comment';

/**
 * The first line of every comment, invisible once rendered: `<!-- attestorm-comment scenario=quick -->`.
 * One per scenario, so a workflow running several keeps one comment for each.
 */
export function commentMarker(scenario: string): string {
  // A name read from a results.json is not trusted to keep the HTML comment closed.
  return `<!-- ${MARKER} scenario=${scenario.replace(/[^A-Za-z0-9._-]/g, '-')} -->`;
}

export interface PrCommentInput {
  results: RunResults;
  /** The gate's comparison with a baseline; none shows the run alone. */
  baseline?: BaselineComparison | null;
  runDir: string;
  /** The memory chart as Mermaid blocks with its sentence (renderMermaidCharts). */
  charts?: string[];
  env?: NodeJS.ProcessEnv;
  /** The folder paths are shown relative to (default: the working folder). */
  cwd?: string;
}

const MARK: Record<FigureVerdict, string> = { unchanged: '✅', regressed: '❌', improved: '🟢' };

function legend(cmp: BaselineComparison): string {
  const flagged = cmp.figures.some((f) => f.flag) ? ' · ⚑ the agent differs from the baseline’s (compared anyway)' : '';
  return `✅ within tolerance · ❌ regressed beyond tolerance · 🟢 improved beyond tolerance${flagged}. Values are medians over repetitions; changes are against the baseline’s.`;
}

/** A variant's figure as a cell: the value, and against a baseline its change and verdict. */
function figureCell(v: VariantResult, def: (typeof FIGURES)[number], compared: BaselineFigure | undefined): string {
  const value = def.read(v);
  if (!value) return '–';
  const text = def.format(value.median);
  if (!compared) return text;
  return `${text} (${changeText(compared)}) ${MARK[compared.verdict]}${compared.flag ? ' ⚑' : ''}`;
}

/** One row per variant, one column per figure some variant measured. */
function figureTable(r: RunResults, cmp: BaselineComparison | null): string[] {
  const ran = r.variants.filter((v) => v.error === undefined);
  const defs = FIGURES.filter((def) => ran.some((v) => def.read(v) !== null));
  const lines = [`| variant | ${defs.map((d) => d.label).join(' | ')} |`, `|---|${defs.map(() => '---:').join('|')}|`];
  for (const v of r.variants) {
    if (v.error !== undefined) {
      lines.push(`| ${mdCell(v.name)} | did not run: ${mdCell(v.error)} |${' |'.repeat(Math.max(0, defs.length - 1))}`);
      continue;
    }
    const figures = cmp?.figures.filter((f) => f.variant === v.name) ?? [];
    const name = cmp && figures.length === 0 ? `${v.name} (not compared)` : v.name;
    const cells = defs.map((def) =>
      figureCell(
        v,
        def,
        figures.find((f) => f.figure === def.id),
      ),
    );
    lines.push(`| ${[name, ...cells].map(mdCell).join(' | ')} |`);
  }
  return lines;
}

/** The figures a gate would act on (or praise), each with the comparison that decided it. */
function beyondTolerance(cmp: BaselineComparison): string[] {
  return cmp.figures
    .filter((f) => f.verdict !== 'unchanged')
    .map((f) => `- ${MARK[f.verdict]} **${mdCell(f.variant)}** ${mdCell(f.label)} ${f.verdict}: ${mdCell(f.rule)}`);
}

function details(summary: string, body: string[]): string[] {
  return [`<details><summary>${summary}</summary>`, '', ...body, '', '</details>'];
}

export function renderPrComment(input: PrCommentInput): string {
  const { results: r } = input;
  const cmp = input.baseline ?? null;
  const shown = (p: string) => shownPath(p, input.cwd);
  // A baseline outside the working folder would show as a bare "results.json": its folder says which run.
  const shownBaseline = (p: string) =>
    shown(p) === 'results.json' && p !== 'results.json' ? path.join(path.basename(path.dirname(p)), 'results.json') : shown(p);
  const reps = Math.max(0, ...r.variants.map((v) => v.runDirs.length));
  const facts = [`verdict ${r.verdict}`, `status ${r.status}`, `${r.variants.length} variant${r.variants.length === 1 ? '' : 's'}`];
  facts.push(`${reps} repetition${reps === 1 ? '' : 's'}`);
  facts.push(cmp ? mdCell(headline({ ...cmp, from: shownBaseline(cmp.from) })) : 'no baseline: the run alone');

  const head = [commentMarker(r.scenario.name), `### ${verdictMark(r, cmp)} — attestorm ${mdCell(r.scenario.name)}`, '', facts.join(' · '), ''];
  head.push(...figureTable(r, cmp));
  if (cmp) head.push('', legend(cmp));
  const beyond = cmp ? beyondTolerance(cmp) : [];
  if (beyond.length > 0) head.push('', ...beyond);
  const unmet = unmetExpectations(r);
  if (unmet.length > 0) head.push('', ...unmet);
  if (cmp && cmp.notes.length > 0) head.push('', ...cmp.notes.map((n) => `- note: ${mdCell(n)}`));

  const chart = input.charts && input.charts.length > 0 ? ['', ...input.charts] : [];
  const table = cmp
    ? ['', ...details('Every figure against the baseline: before, after, tolerance and the rule that decided', [...baselineTableMarkdown(cmp), '', cmp.rule])]
    : [];
  const link = artifactsLink(input.env ?? process.env);
  const foot = ['', `<sub>attestorm ${mdCell(r.tool.version)} · run folder \`${shown(input.runDir)}\`${link ? ` · [artifacts](${link})` : ''}</sub>`];

  // Too long (hundreds of variants, long notes): the per-figure table goes first, then the chart,
  // each said to be left out; the verdict and the figures stay. Only then are lines cut.
  const join = (...parts: string[][]) => `${parts.flat().join('\n')}\n`;
  for (const keep of [
    { chart: true, table: true },
    { chart: true, table: false },
    { chart: false, table: false },
  ]) {
    const left = [
      !keep.table && table.length > 0 ? 'the table of every figure against the baseline' : '',
      !keep.chart && chart.length > 0 ? 'the memory chart' : '',
    ];
    const note = left.some(Boolean)
      ? [
          '',
          `<sub>Left out to stay under GitHub's comment limit: ${left.filter(Boolean).join(' and ')}. \`attestorm report\` renders them from the run folder.</sub>`,
        ]
      : [];
    const body = join(head, keep.chart ? chart : [], keep.table ? table : [], note, foot);
    if (Buffer.byteLength(body) <= COMMENT_LIMIT) return body;
  }
  const where = `${shown(input.runDir)}/results.json`;
  return fitMarkdown(join(head, foot), COMMENT_LIMIT, where, { what: 'Comment', limit: "GitHub's 65,536-character comment limit" }).text;
}

export interface CommentOptions {
  /** A run folder or results.json to compare with (--baseline). */
  baseline?: string;
  /** --tolerance, with --baseline. */
  tolerance?: string | string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Where notes go (default stderr). */
  log?: (text: string) => void;
}

/** A comparison `attestorm run --baseline` stored in results.json, when it holds one. */
function storedComparison(results: RunResults): BaselineComparison | null {
  const cmp = results.baseline as Partial<BaselineComparison> | undefined;
  return cmp && Array.isArray(cmp.figures) && Array.isArray(cmp.notes) ? (cmp as BaselineComparison) : null;
}

/**
 * The comment on the run folder `runDir`: against `opts.baseline` compared as the gate compares
 * (compareWithBaseline, the tolerances parsed as `run --tolerance` parses them); without it, against
 * the baseline `run --baseline` compared it with, if any; else the run alone.
 */
export async function commentOnRun(runDir: string, opts: CommentOptions = {}): Promise<{ text: string; comparison: BaselineComparison | null }> {
  const log = opts.log ?? ((t: string) => process.stderr.write(t));
  const hasTolerance = opts.tolerance !== undefined && (Array.isArray(opts.tolerance) ? opts.tolerance.length > 0 : true);
  // Flags first: a bad tolerance fails before any file is read.
  if (hasTolerance && opts.baseline === undefined)
    throw new ConfigError('--tolerance applies to a --baseline comparison; add --baseline <run folder or results.json>');
  const tolerances = parseTolerances(opts.tolerance);
  const { file, results } = readResultsFile(runDir, 'comment');
  if (results.schemaVersion !== RESULTS_SCHEMA_VERSION) {
    throw new ConfigError(`comment ${file}: results schemaVersion ${JSON.stringify(results.schemaVersion)}; attestorm comment reads ${RESULTS_SCHEMA_VERSION}`);
  }
  let comparison: BaselineComparison | null;
  if (opts.baseline !== undefined) {
    const base = readResultsFile(opts.baseline, '--baseline');
    comparison = compareWithBaseline(base.results, results, tolerances, { from: base.file });
  } else comparison = storedComparison(results);
  const dir = path.dirname(file);
  // The samples may be gone (a results.json kept alone): the comment then goes without its chart.
  const charts = await mermaidChartsOf(dir, { charts: ['memory'], maxPoints: COMMENT_CHART_POINTS }).catch((err: Error) => {
    log(`attestorm: the comment goes without its memory chart: ${err.message}\n`);
    return [];
  });
  const text = renderPrComment({
    results,
    baseline: comparison,
    runDir: dir,
    charts,
    ...(opts.env ? { env: opts.env } : {}),
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
  });
  return { text, comparison };
}
