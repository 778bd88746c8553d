// The end-of-run comparison on the console, one row per variant, laid out to fit the terminal: the
// essential columns by default, every column with --wide; the notes under it wrapped to the same
// width. Plain text only (no colour, no JSON): it goes to terminals, log files and CI consoles alike.
import {
  judgementSentence,
  MEASURE_EXPLAINED,
  MEASURE_WORDS,
  modeledCostsSentences,
  runMemoryMeasure,
  workingSetPartsWords,
  type RunResults,
  type VariantResult,
} from '../contract/index.js';
import { MIN_COLUMNS, wrapText } from '../util/index.js';
import { worstPressure } from './memory-pressure.js';

const mib = (b: number) => (b / 2 ** 20).toFixed(1);

/** "2 passed, 1 inconclusive" / "1 FAILED of 3". */
export function expectationSummary(v: Pick<VariantResult, 'expectations' | 'error' | 'notJudged'>): string {
  if (v.error) return `error: ${v.error.slice(0, 40)}`;
  if (v.notJudged) return 'not judged: machine too slow';
  if (!v.expectations.length) return '-';
  const count = (x: string) => v.expectations.filter((e) => e.verdict === x).length;
  const parts = [`${count('passed')} passed`];
  if (count('inconclusive')) parts.push(`${count('inconclusive')} inconclusive`);
  if (count('failed')) parts.push(`${count('failed')} FAILED`);
  return parts.join(', ');
}

/** The variant's verdict in one word; the reasons are listed under the table. */
function verdictWord(v: VariantResult): string {
  if (v.error) return 'error';
  if (v.notJudged) return 'not judged';
  if (!v.expectations.length) return '-';
  return v.verdict === 'failed' ? 'FAILED' : v.verdict;
}

interface Column {
  header: string;
  cell: (v: VariantResult) => string;
  /** Numbers line up on the right. */
  right?: boolean;
  /** Text that may be cut (with …) down to this width when the terminal is too narrow; absent: never cut. */
  min?: number;
}

const bystanders = (v: VariantResult) => v.bystanders && v.bystanders.calls > 0;

// Each column once; the two layouts below pick from them.
const C = {
  variant: { header: 'variant', cell: (v) => v.name, min: 8 },
  // An agent whose placement is unknown (external) is named by its kind alone.
  agent: { header: 'agent', cell: (v) => (v.agent.placement === null ? v.agent.kind : `${v.agent.kind} ${v.agent.placement}`), min: 9 },
  limit: { header: 'limit', cell: (v) => (v.memoryLimitBytes ? `${mib(v.memoryLimitBytes)} MiB` : '-'), right: true },
  peakOfLimit: {
    header: 'peak/limit MiB',
    cell: (v) =>
      `${v.peakMemoryBytes === null ? 'unmeasured' : mib(v.peakMemoryBytes)}/${v.memoryLimitBytes ? (v.memoryLimitBytes / 2 ** 20).toFixed(0) : '-'}`,
    right: true,
  },
  peak: {
    header: 'peak MiB (% limit)',
    cell: (v) => {
      if (v.peakMemoryBytes === null) return 'unmeasured';
      const pct = v.memoryLimitBytes ? ` (${Math.round((v.peakMemoryBytes / v.memoryLimitBytes) * 100)}%)` : '';
      const s = v.spread.peakMemoryBytes;
      return `${mib(v.peakMemoryBytes)}${pct}${s && s.min !== s.max ? ` [${mib(s.min)}–${mib(s.max)}]` : ''}`;
    },
    right: true,
  },
  oom: { header: 'OOM', cell: (v) => String(v.oomKills), right: true },
  // The worst repetition's seconds at >= 95% of the limit, of its storm's.
  nearLimit: {
    header: '≥95% s',
    cell: (v) => {
      const worst = worstPressure(v.memoryPressure);
      if (!worst) return '-';
      return `${worst.nearLimitSeconds.toFixed(0)}/${worst.stormSeconds.toFixed(0)}`;
    },
    right: true,
  },
  oomKills: { header: 'OOM kills', cell: (v) => String(v.oomKills), right: true },
  restarts: { header: 'restarts', cell: (v) => String(v.restarts), right: true },
  offered: {
    header: 'offered→answered/s',
    cell: (v) => (v.storm ? `${v.storm.offeredRps.toFixed(0)}→${v.storm.deliveredRps.toFixed(0)}` : '-'),
    right: true,
  },
  bystanders: { header: 'bystanders', cell: (v) => (bystanders(v) ? `${Math.round(100 * v.bystanders!.successRatio)}%` : '-'), right: true },
  bystandersGap: {
    header: 'bystanders (gap)',
    cell: (v) => (bystanders(v) ? `${Math.round(100 * v.bystanders!.successRatio)}% (${(v.bystanders!.longestGapMs / 1000).toFixed(1)}s)` : '-'),
    right: true,
  },
  ok: { header: 'ok/s', cell: (v) => v.okRps.toFixed(1), right: true },
  rejected: { header: 'rejected/s', cell: (v) => v.rejectedRps.toFixed(1), right: true },
  deadline: { header: 'deadline/s', cell: (v) => v.deadlineExceededRps.toFixed(1), right: true },
  error: { header: 'error/s', cell: (v) => v.errorRps.toFixed(1), right: true },
  p99: { header: 'p99 ok ms', cell: (v) => (v.latency.ok ? v.latency.ok.p99Ms.toFixed(1) : '-'), right: true },
  verdict: { header: 'verdict', cell: verdictWord, min: 7 },
  expectations: { header: 'expectations', cell: expectationSummary, min: 12 },
} satisfies Record<string, Column>;

/** What a reader needs to compare placements at a glance. */
export const ESSENTIAL_COLUMNS: readonly Column[] = [C.variant, C.peakOfLimit, C.oom, C.bystanders, C.ok, C.rejected, C.verdict];
/** Everything the table knows (--wide). */
export const WIDE_COLUMNS: readonly Column[] = [
  C.variant,
  C.agent,
  C.limit,
  C.peak,
  C.oomKills,
  C.nearLimit,
  C.restarts,
  C.offered,
  C.bystandersGap,
  C.ok,
  C.rejected,
  C.deadline,
  C.error,
  C.p99,
  C.verdict,
  C.expectations,
];

export interface TableLayout {
  /** Terminal columns to fit (at least 80; see terminalColumns). Default 80. */
  width?: number;
  /** Every column, in full, rather than the essential ones; the table may then be wider than the terminal (its notes are not). */
  wide?: boolean;
}

/**
 * Column widths that fit `width`: two spaces between columns, else one; then the text columns cut
 * (widest first) down to their minimum. --wide cuts nothing: every column in full was asked for.
 */
function fit(columns: readonly Column[], cells: string[][], width: number, wide: boolean): { widths: number[]; gap: number } {
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((r) => r[i]!.length)));
  const total = (gap: number) => widths.reduce((a, b) => a + b, 0) + gap * (columns.length - 1);
  if (wide || total(2) <= width) return { widths, gap: 2 };
  let excess = total(1) - width;
  while (excess > 0) {
    let cut = -1;
    columns.forEach((c, i) => {
      if (c.min !== undefined && widths[i]! > Math.max(c.min, c.header.length) && (cut < 0 || widths[i]! > widths[cut]!)) cut = i;
    });
    if (cut < 0) break;
    widths[cut]!--;
    excess--;
  }
  return { widths, gap: 1 };
}

const clip = (text: string, w: number) => (text.length <= w ? text : `${text.slice(0, Math.max(0, w - 1))}…`);

function renderRows(columns: readonly Column[], variants: VariantResult[], width: number, wide: boolean): string[] {
  const cells = variants.map((v) => columns.map((c) => c.cell(v)));
  const { widths, gap } = fit(columns, cells, width, wide);
  const line = (row: string[]) =>
    row
      .map((text, i) => {
        const t = clip(text, widths[i]!);
        return columns[i]!.right ? t.padStart(widths[i]!) : t.padEnd(widths[i]!);
      })
      .join(' '.repeat(gap))
      .trimEnd();
  return [line(columns.map((c) => c.header)), widths.map((w) => '-'.repeat(w)).join(' '.repeat(gap)), ...cells.map(line)];
}

/** A titled list under the table, each item wrapped to the width and hanging under its first word. */
function notes(title: string, items: string[], width: number): string[] {
  if (items.length === 0) return [];
  return ['', ...wrapText(title, width), ...items.flatMap((i) => wrapText(i, width, '  ', '    '))];
}

export function comparisonTable(results: RunResults, layout: TableLayout = {}): string {
  const width = Math.max(MIN_COLUMNS, layout.width ?? MIN_COLUMNS);
  const wide = layout.wide === true;
  const lines = renderRows(wide ? WIDE_COLUMNS : ESSENTIAL_COLUMNS, results.variants, width, wide);
  const vs = results.variants;
  const measure = runMemoryMeasure(results);
  // The headers say "peak"; which memory figure that is, and what survival rests on, is said here.
  lines.push(...notes(`peaks are the ${MEASURE_WORDS[measure]}:`, [`${MEASURE_EXPLAINED[measure]}; survival is the kernel's OOM kill`], width));
  lines.push(
    ...notes(
      'the working set at its highest reading (MiB):',
      vs.flatMap((v) => (v.peaks?.workingSetParts ? [`${v.name}: ${workingSetPartsWords(v.peaks.workingSetParts)}`] : [])),
      width,
    ),
  );
  lines.push(
    ...notes(
      'variants without a verdict:',
      [...vs.filter((v) => v.error).map((v) => `${v.name}: ${v.error}`), ...vs.filter((v) => v.notJudged).map((v) => `${v.name}: not judged: ${v.notJudged}`)],
      width,
    ),
  );
  lines.push(
    ...notes(
      'expectations not passed:',
      vs.flatMap((v) => v.expectations.filter((e) => e.verdict !== 'passed').map((e) => `${v.name}: ${e.name} ${e.verdict}: ${e.message}`)),
      width,
    ),
  );
  const deaths = vs.flatMap((v) =>
    v.deaths
      .filter((d) => d.phase !== 'load')
      .map((d) => `${v.name} r${d.rep}: ${d.cause} at ${(d.atMs / 1000).toFixed(1)} s, during ${d.phase}${d.counted ? '' : ' (not counted)'}`),
  );
  lines.push(...notes('agent deaths outside the load phase:', deaths, width));
  lines.push(
    ...notes(
      'the storm shrank (figures understate the load):',
      vs.filter((v) => v.storm?.shrank).map((v) => `${v.name}: ${v.storm!.shrank}`),
      width,
    ),
  );
  lines.push(
    ...notes(
      'the generator fell behind (per-second series bunched; totals exact):',
      vs.filter((v) => v.storm?.late).map((v) => `${v.name}: ${v.storm!.late}`),
      width,
    ),
  );
  lines.push(
    ...notes(
      'survived at its limit (>= 20% of the storm at >= 95% of the limit, or PSI full >= 10%):',
      vs.filter((v) => v.atLimit).map((v) => `${v.name}: ${v.atLimit}`),
      width,
    ),
  );
  // At the end, what the verdict judged (dropped rules among them); while it runs, the rules already dropped.
  const j = results.judgement;
  lines.push(...notes(`verdict ${results.verdict}:`, j ? [judgementSentence(j)] : [], width));
  lines.push(...notes('expectations dropped (variant subset):', j ? [] : results.droppedExpectations, width));
  lines.push(
    ...notes(
      'modeled costs and behaviours (differing from the agent defaults):',
      modeledCostsSentences(
        results.scenario.modeledCosts,
        vs.map((v) => v.name),
      ),
      width,
    ),
  );
  return `${lines.join('\n')}\n`;
}
