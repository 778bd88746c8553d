// Repetitions as the unit of evidence in a report: each variant's figures as the median with
// min–max over its repetitions and its OOM kills as a distribution counting survivors, and every
// difference — between two variants of a run, or one variant in two runs — judged by the spread
// rule (contract/spread-rule.ts): outside the spread, or "not distinguishable with m and n runs".
import { compareRanges, type RangeComparison, type RepetitionFigures } from '../contract/index.js';
import { oomKillDistribution } from './repetitions.js';

/** A variant's repetitions, as the report reads them. */
export interface VariantRepetitions {
  run: string;
  variant: string;
  reps: RepetitionFigures[];
}

interface Spread {
  median: number;
  min: number;
  max: number;
}

export interface SpreadRow {
  run: string;
  variant: string;
  runs: number;
  peakMiB: Spread | null;
  okRps: Spread | null;
  kubeletRps: Spread | null;
  /** "killed in 3 of 5: 8 s, 12 s, 40 s; 2 survived". */
  oomKills: string;
}

/** The figures a difference is judged on, each read from one repetition (null: not measured there). */
export const DIFFERENCE_FIGURES = [
  { id: 'peak', label: 'peak memory (MiB)', read: (r: RepetitionFigures) => (r.peakMemoryBytes === null ? null : r.peakMemoryBytes / 2 ** 20), digits: 1 },
  { id: 'ok', label: 'ok/s', read: (r: RepetitionFigures) => (r.loadSeconds > 0 ? r.okRps : null), digits: 1 },
  {
    // A repetition that survived counts as killed no earlier than its end: later than any kill.
    id: 'kill',
    label: 'time to first OOM kill (s; survivors at the load’s end)',
    read: (r: RepetitionFigures) => (r.firstOomKillMs !== null ? r.firstOomKillMs / 1000 : r.loadSeconds > 0 ? r.loadSeconds : null),
    digits: 1,
  },
  { id: 'kubelet', label: 'kubelet requests/s', read: (r: RepetitionFigures) => r.kubeletRequestsPerSecond, digits: 2 },
] as const;

export interface DifferenceRow {
  /** "pre-attestation vs disabled", or "run-b vs run-a · v1-15-3". */
  what: string;
  figure: string;
  a: Spread & { runs: number };
  b: Spread & { runs: number };
  digits: number;
  comparison: RangeComparison;
}

function spreadOf(xs: number[]): Spread | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((p, q) => p - q);
  const mid = s.length >> 1;
  return { median: s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2, min: s[0]!, max: s[s.length - 1]! };
}

const values = (reps: RepetitionFigures[], read: (r: RepetitionFigures) => number | null) =>
  reps.flatMap((r) => [read(r)].filter((x): x is number => x !== null));

export function spreadRows(variants: VariantRepetitions[]): SpreadRow[] {
  return variants.map((v) => ({
    run: v.run,
    variant: v.variant,
    runs: v.reps.length,
    peakMiB: spreadOf(values(v.reps, DIFFERENCE_FIGURES[0].read)),
    okRps: spreadOf(values(v.reps, DIFFERENCE_FIGURES[1].read)),
    kubeletRps: spreadOf(values(v.reps, DIFFERENCE_FIGURES[3].read)),
    oomKills: oomKillDistribution(v.reps),
  }));
}

function differences(what: string, a: RepetitionFigures[], b: RepetitionFigures[]): DifferenceRow[] {
  return DIFFERENCE_FIGURES.flatMap((f) => {
    const xa = values(a, f.read);
    const xb = values(b, f.read);
    const sa = spreadOf(xa);
    const sb = spreadOf(xb);
    if (!sa || !sb) return [];
    return [
      {
        what,
        figure: f.label,
        a: { ...sa, runs: xa.length },
        b: { ...sb, runs: xb.length },
        digits: f.digits,
        comparison: compareRanges(sa, xa.length, sb, xb.length),
      },
    ];
  });
}

/** Variants compared pairwise when there are at most this many; beyond, each against the first. */
const ALL_PAIRS_UP_TO = 5;

/** Within one run: every pair of variants (few), or each against the first. */
export function variantDifferences(variants: VariantRepetitions[]): DifferenceRow[] {
  const ran = variants.filter((v) => v.reps.length > 0);
  const pairs: [VariantRepetitions, VariantRepetitions][] = [];
  if (ran.length <= ALL_PAIRS_UP_TO) for (let i = 0; i < ran.length; i++) for (let j = i + 1; j < ran.length; j++) pairs.push([ran[i]!, ran[j]!]);
  else for (const v of ran.slice(1)) pairs.push([ran[0]!, v]);
  return pairs.flatMap(([a, b]) => differences(`${b.variant} vs ${a.variant}`, a.reps, b.reps));
}

/** Between runs: each later run's variant against the same variant in the first run. */
export function runDifferences(runs: VariantRepetitions[][]): DifferenceRow[] {
  const [first, ...later] = runs;
  if (!first) return [];
  return later.flatMap((run) =>
    run.flatMap((v) => {
      const base = first.find((f) => f.variant === v.variant);
      return base ? differences(`${v.run} vs ${base.run} · ${v.variant}`, base.reps, v.reps) : [];
    }),
  );
}
