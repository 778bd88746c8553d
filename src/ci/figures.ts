// The figures a baseline gate compares, one table: how each is read from a VariantResult, which
// direction is better, and how its tolerance is expressed (relative, absolute count, or points).
import type { BystanderSummary, Range, VariantResult } from '../contract/index.js';

export type FigureId = 'peakMemory' | 'oomKills' | 'restarts' | 'okRps' | 'rejectedRps' | 'p99Latency' | 'bystanderSuccess' | 'bystanderGap';

/**
 * relative: tolerance is a percentage of the baseline ("10%");
 * count: an absolute number of events ("oomKills=0"), because one more OOM kill is never noise;
 * points: percentage points of a ratio ("bystanderSuccess=1%" allows 99.5% → 98.5%).
 */
export type ToleranceKind = 'relative' | 'count' | 'points';

export interface FigureDef {
  id: FigureId;
  label: string;
  unit: string;
  /** 'lower': a rise is a regression (memory, kills); 'higher': a fall is (ok/s, bystander success). */
  better: 'lower' | 'higher';
  kind: ToleranceKind;
  /** Differences at or below this (in the figure's unit) are never a verdict: below measurement noise. */
  floor: number;
  /** min/median/max across repetitions; a single value becomes a range of one point. Null when absent. */
  read(v: VariantResult): Range | null;
  format(value: number): string;
}

/** A variant's bystander figures when it measured them. */
export function bystandersOf(v: VariantResult): BystanderSummary | null {
  // results.json is read from disk (a baseline, the run folders of a history), maybe written by an
  // older version: the fields are checked, not trusted.
  const b: unknown = v.bystanders;
  if (!b || typeof b !== 'object') return null;
  const f = b as Partial<BystanderSummary>;
  // No call made means nothing measured (successRatio is then 0), not a 0% success.
  if (typeof f.calls === 'number' && f.calls <= 0) return null;
  return typeof f.successRatio === 'number' && typeof f.longestGapMs === 'number' ? (f as BystanderSummary) : null;
}

const point = (n: number | null | undefined): Range | null => (typeof n === 'number' && Number.isFinite(n) ? { min: n, median: n, max: n } : null);

/**
 * Counts are summed over repetitions; they compare as the mean per repetition, not as a range: with
 * ranges, one kill in one of three repetitions would overlap a baseline of none and pass.
 */
const perRepetition = (v: VariantResult, total: number): Range | null => point(total / Math.max(1, v.runDirs.length));

const num = (n: number, digits: number) => (Math.abs(n) >= 100 ? n.toFixed(0) : n.toFixed(digits));

export const FIGURES: readonly FigureDef[] = [
  {
    id: 'peakMemory',
    label: 'peak memory',
    unit: 'MiB',
    better: 'lower',
    kind: 'relative',
    floor: 1 * 2 ** 20,
    // In the run's memoryMeasure (working set unless the scenario chose another); the gate compares only equal measures.
    read: (v) => v.spread.peakMemoryBytes ?? point(v.peakMemoryBytes),
    format: (b) => `${(b / 2 ** 20).toFixed(1)} MiB`,
  },
  {
    id: 'oomKills',
    label: 'OOM kills',
    unit: 'kills',
    better: 'lower',
    kind: 'count',
    floor: 0,
    read: (v) => perRepetition(v, v.oomKills),
    format: (n) => String(+n.toFixed(2)),
  },
  {
    id: 'restarts',
    label: 'restarts',
    unit: 'restarts',
    better: 'lower',
    kind: 'count',
    floor: 0,
    read: (v) => perRepetition(v, v.restarts),
    format: (n) => String(+n.toFixed(2)),
  },
  {
    id: 'okRps',
    label: 'ok/s',
    unit: '/s',
    better: 'higher',
    kind: 'relative',
    floor: 1,
    read: (v) => v.spread.okRps ?? point(v.okRps),
    format: (n) => `${num(n, 1)}/s`,
  },
  {
    // More rejections at the same offered load means more callers turned away.
    id: 'rejectedRps',
    label: 'rejected/s',
    unit: '/s',
    better: 'lower',
    kind: 'relative',
    floor: 1,
    read: (v) => v.spread.rejectedRps ?? point(v.rejectedRps),
    format: (n) => `${num(n, 1)}/s`,
  },
  {
    id: 'p99Latency',
    label: 'p99 ok latency',
    unit: 'ms',
    better: 'lower',
    kind: 'relative',
    floor: 1,
    read: (v) => point(v.latency.ok?.p99Ms),
    format: (n) => `${num(n, 1)} ms`,
  },
  {
    id: 'bystanderSuccess',
    label: 'bystander success',
    unit: '%',
    better: 'higher',
    kind: 'points',
    floor: 0,
    read: (v) => point(bystandersOf(v)?.successRatio),
    format: (r) => `${(r * 100).toFixed(1)}%`,
  },
  {
    id: 'bystanderGap',
    label: 'bystander longest gap',
    unit: 'ms',
    better: 'lower',
    kind: 'relative',
    floor: 100,
    read: (v) => point(bystandersOf(v)?.longestGapMs),
    format: (n) => `${num(n, 0)} ms`,
  },
];

export const FIGURE_IDS: readonly FigureId[] = FIGURES.map((f) => f.id);

export function figureDef(id: FigureId): FigureDef {
  return FIGURES.find((f) => f.id === id)!;
}
