// The baseline gate: a new run compared with a stored one, figure by figure, direction-aware and
// noise-aware. A figure regresses only when the ranges over repetitions say so (see RULE).
import { ConfigError } from '../errors.js';
import { MEASURE_WORDS, RESULTS_SCHEMA_VERSION, type Range, type RunResults, type VariantAgentRecord, type VariantResult } from '../contract/index.js';
import { FIGURES, type FigureDef, type FigureId } from './figures.js';
import { provenanceOf } from './provenance.js';
import { parseTolerances, type Tolerances } from './tolerance.js';

export type FigureVerdict = 'regressed' | 'improved' | 'unchanged';

export interface BaselineFigure {
  variant: string;
  figure: FigureId;
  label: string;
  /** Medians across repetitions, in the figure's raw unit (bytes, counts, per second, ms, ratio). */
  before: number;
  after: number;
  beforeRange: Range;
  afterRange: Range;
  repetitions: { before: number; after: number };
  /** after − before (medians), raw unit. */
  change: number;
  /** change / before; null when the baseline is 0. */
  changeRatio: number | null;
  /** As configured: "10%", "±0", "1 pt". */
  tolerance: string;
  /** What the tolerance amounted to for this figure, raw unit (a relative tolerance never goes below the figure's noise floor). */
  allowance: number;
  verdict: FigureVerdict;
  /** The comparison that decided the verdict, with the numbers. */
  rule: string;
  /** Set when this variant's agent differs from the baseline's (the comparison is still made, flagged). */
  flag?: string;
}

export interface BaselineComparison {
  /** The baseline's results.json as given. */
  from: string;
  scenario: string;
  baselineStartedAt: string;
  /** The baseline's git commit when it recorded one (provenance.git.commit). */
  baselineCommit: string | null;
  rule: string;
  figures: BaselineFigure[];
  /** What was not compared, or compared with a caveat (agent versions, missing variants, settings). */
  notes: string[];
  regressed: number;
  improved: number;
  unchanged: number;
}

export const RULE =
  'Each figure is compared as a range over repetitions (min–max; one repetition is a single point). ' +
  'For a figure where lower is better, it regressed when the new minimum is above the baseline maximum plus the tolerance, ' +
  'and improved when the new maximum is below the baseline minimum minus the tolerance; mirrored where higher is better. ' +
  'Overlapping ranges are unchanged. Relative tolerances are a percentage of the baseline value with a per-figure noise floor ' +
  '(1 MiB, 1/s, 1 ms, 100 ms for gaps); OOM kills and restarts compare as the mean count per repetition against an absolute tolerance (default 0); bystander success in percentage points.';

export interface CompareOptions {
  /** Path shown as `from` (default "baseline"). */
  from?: string;
  /** How refusals name the input (default "--baseline"). */
  what?: string;
}

/**
 * Refuses a baseline that cannot be compared with a run of `scenarioName` (another scenario or
 * another schema). Cheap enough to run before anything starts.
 */
export function checkBaselineCompatible(baseline: RunResults, scenarioName: string, from: string, what = '--baseline'): void {
  const problems: string[] = [];
  if (baseline.schemaVersion !== RESULTS_SCHEMA_VERSION) {
    problems.push(
      `${what} ${from}: refused: it has results schemaVersion ${JSON.stringify(baseline.schemaVersion)}, this attestorm writes ${RESULTS_SCHEMA_VERSION}; figures are not comparable across schemas (re-run the baseline with this version)`,
    );
  }
  const name = baseline.scenario?.name;
  if (name !== scenarioName) {
    problems.push(`${what} ${from}: refused: it is a run of scenario ${JSON.stringify(name)}, this run is of ${JSON.stringify(scenarioName)}`);
  }
  if (problems.length > 0) throw new ConfigError(problems);
}

export function compareWithBaseline(
  before: RunResults,
  after: RunResults,
  tolerances: Tolerances = parseTolerances(undefined),
  opts: CompareOptions = {},
): BaselineComparison {
  const from = opts.from ?? 'baseline';
  checkBaselineCompatible(before, after.scenario.name, from, opts.what);
  if (after.schemaVersion !== RESULTS_SCHEMA_VERSION) {
    throw new ConfigError(`the new run has results schemaVersion ${JSON.stringify(after.schemaVersion)}; the baseline gate reads ${RESULTS_SCHEMA_VERSION}`);
  }
  const notes: string[] = [];
  if (before.status !== 'complete')
    notes.push(`the baseline's status is ${before.status}${before.statusDetail ? ` (${before.statusDetail})` : ''}: its figures may be partial`);
  notes.push(...environmentNotes(before, after));
  notes.push(...settingNotes(before.scenario.resolved, after.scenario.resolved));

  const figures: BaselineFigure[] = [];
  const beforeByName = new Map(before.variants.map((v) => [v.name, v]));
  const afterNames = new Set(after.variants.map((v) => v.name));
  for (const v of before.variants) {
    if (!afterNames.has(v.name)) notes.push(`variant ${v.name}: in the baseline only, not compared`);
  }
  for (const a of after.variants) {
    const b = beforeByName.get(a.name);
    if (!b) {
      notes.push(`variant ${a.name}: not in the baseline, not compared`);
      continue;
    }
    if (b.error !== undefined || a.error !== undefined) {
      notes.push(`variant ${a.name}: not compared, it did not run in the ${b.error !== undefined ? 'baseline' : 'new run'} (${b.error ?? a.error})`);
      continue;
    }
    const flag = agentDifference(b.agent, a.agent);
    if (flag) notes.push(`variant ${a.name}: the agent differs from the baseline's (${flag}); compared anyway, flagged`);
    // Peaks in different measures (a scenario that changed memoryMeasure) are not one figure.
    const otherMeasure = a.memoryMeasure !== b.memoryMeasure;
    if (otherMeasure)
      notes.push(
        `variant ${a.name}: peak memory not compared: the baseline's is its ${MEASURE_WORDS[b.memoryMeasure]}, this run's its ${MEASURE_WORDS[a.memoryMeasure]}`,
      );
    for (const def of FIGURES) {
      if (otherMeasure && def.id === 'peakMemory') continue;
      const fig = compareFigure(def, b, a, tolerances);
      if (!fig) continue;
      if (flag) fig.flag = `agent differs: ${flag}`;
      figures.push(fig);
    }
  }
  const count = (verdict: FigureVerdict) => figures.filter((f) => f.verdict === verdict).length;
  const commit = provenanceOf(before)?.git?.commit;
  return {
    from,
    scenario: after.scenario.name,
    baselineStartedAt: before.startedAt,
    baselineCommit: typeof commit === 'string' ? commit : null,
    rule: RULE,
    figures,
    notes,
    regressed: count('regressed'),
    improved: count('improved'),
    unchanged: count('unchanged'),
  };
}

function compareFigure(def: FigureDef, b: VariantResult, a: VariantResult, tolerances: Tolerances): BaselineFigure | null {
  const before = def.read(b);
  const after = def.read(a);
  if (!before || !after) return null;
  const tol = tolerances.byFigure[def.id];
  const tolText = tolerances.text[def.id];
  const reps = b.runDirs.length > 1 || a.runDirs.length > 1;
  // Counts come as a mean per repetition (a point); the other figures as ranges over repetitions.
  const ranges = def.kind !== 'count' && (reps || before.min !== before.max || after.min !== after.max);
  const allowance = (x: number) => (def.kind === 'relative' ? Math.max(tol * Math.abs(x), def.floor) : Math.max(tol, def.floor));
  const f = def.format;
  const perRep = def.kind === 'count' && reps ? ' per repetition' : '';
  const newLo = ranges ? 'new min' : `new${perRep}`;
  const newHi = ranges ? 'new max' : `new${perRep}`;
  const baseLo = ranges ? 'baseline min' : 'baseline';
  const baseHi = ranges ? 'baseline max' : 'baseline';
  const allowText = (x: number) => (def.kind === 'relative' ? `${tolText} (${f(allowance(x))})` : def.kind === 'count' ? `${tol}` : tolText);

  // Thresholds on either side of the baseline's range.
  // Every figure is a count, rate, size, time or ratio: a threshold below zero reads as zero.
  const upper = before.max + allowance(before.max);
  const lower = Math.max(0, before.min - allowance(before.min));
  let verdict: FigureVerdict;
  let rule: string;
  if (def.better === 'lower') {
    if (after.min > upper) {
      verdict = 'regressed';
      rule = `${newLo} ${f(after.min)} > ${baseHi} ${f(before.max)} + ${allowText(before.max)} = ${f(upper)}`;
    } else if (after.max < lower) {
      verdict = 'improved';
      rule = `${newHi} ${f(after.max)} < ${baseLo} ${f(before.min)} − ${allowText(before.min)} = ${f(lower)}`;
    } else {
      verdict = 'unchanged';
      rule = `${newLo} ${f(after.min)} ≤ ${baseHi} ${f(before.max)} + ${allowText(before.max)} = ${f(upper)}`;
    }
  } else if (after.max < lower) {
    verdict = 'regressed';
    rule = `${newHi} ${f(after.max)} < ${baseLo} ${f(before.min)} − ${allowText(before.min)} = ${f(lower)}`;
  } else if (after.min > upper) {
    verdict = 'improved';
    rule = `${newLo} ${f(after.min)} > ${baseHi} ${f(before.max)} + ${allowText(before.max)} = ${f(upper)}`;
  } else {
    verdict = 'unchanged';
    rule = `${newHi} ${f(after.max)} ≥ ${baseLo} ${f(before.min)} − ${allowText(before.min)} = ${f(lower)}`;
  }
  const change = after.median - before.median;
  return {
    variant: a.name,
    figure: def.id,
    label: def.label,
    before: before.median,
    after: after.median,
    beforeRange: before,
    afterRange: after,
    repetitions: { before: b.runDirs.length, after: a.runDirs.length },
    change,
    changeRatio: before.median === 0 ? null : change / before.median,
    tolerance: tolText,
    allowance: def.better === 'lower' ? allowance(before.max) : allowance(before.min),
    verdict,
    rule,
  };
}

const AGENT_FIELDS = ['kind', 'placement', 'key', 'version'] as const;

/**
 * "version 1.9.0 → 1.10.0, key pod-uid → os-uid", or null when the records agree. The binary's path
 * differs between checkouts and CI workspaces (and the reference agent's bundle name changes with any
 * source change, which is what a gate is for), so it counts only when neither side knows its version.
 */
export function agentDifference(b: VariantAgentRecord, a: VariantAgentRecord): string | null {
  const diffs: string[] = [];
  for (const k of AGENT_FIELDS) {
    const x = b?.[k] ?? null;
    const y = a?.[k] ?? null;
    if (x !== y) diffs.push(`${k} ${JSON.stringify(x)} → ${JSON.stringify(y)}`);
  }
  if (!b?.version && !a?.version && (b?.binary ?? null) !== (a?.binary ?? null)) {
    diffs.push(`binary ${JSON.stringify(b?.binary ?? null)} → ${JSON.stringify(a?.binary ?? null)}`);
  }
  return diffs.length > 0 ? diffs.join(', ') : null;
}

function environmentNotes(before: RunResults, after: RunResults): string[] {
  const out: string[] = [];
  for (const k of ['oomFidelity', 'podFidelity', 'cgroupVersion', 'cpus'] as const) {
    const x = before.environment?.[k];
    const y = after.environment?.[k];
    if (x !== y) out.push(`environment differs: ${k} ${JSON.stringify(x)} → ${JSON.stringify(y)}`);
  }
  return out;
}

const MAX_SETTING_NOTES = 6;

/** Leaf-by-leaf differences of the resolved scenarios ("load.duration 30000 → 60000"). */
function settingNotes(before: unknown, after: unknown): string[] {
  const diffs: string[] = [];
  const walk = (x: unknown, y: unknown, path: string) => {
    if (diffs.length > MAX_SETTING_NOTES) return;
    const xo = x !== null && typeof x === 'object';
    const yo = y !== null && typeof y === 'object';
    if (xo && yo && Array.isArray(x) === Array.isArray(y)) {
      const keys = new Set([...Object.keys(x as object), ...Object.keys(y as object)]);
      for (const k of [...keys].sort()) walk((x as Record<string, unknown>)[k], (y as Record<string, unknown>)[k], path ? `${path}.${k}` : k);
      return;
    }
    if (JSON.stringify(x) !== JSON.stringify(y)) diffs.push(`${path || '(scenario)'} ${short(x)} → ${short(y)}`);
  };
  walk(before, after, '');
  if (diffs.length === 0) return [];
  const shown = diffs.slice(0, MAX_SETTING_NOTES);
  const more = diffs.length > MAX_SETTING_NOTES ? ' …' : '';
  return [`scenario settings differ from the baseline's: ${shown.join('; ')}${more}`];
}

function short(v: unknown): string {
  const s = v === undefined ? 'unset' : JSON.stringify(v);
  return s.length > 40 ? `${s.slice(0, 37)}…` : s;
}
