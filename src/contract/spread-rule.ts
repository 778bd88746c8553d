// When two sets of repetitions differ: the rule every report, `report` over several folders and
// the baseline gate apply. A difference is called only when the min–max ranges do not overlap and
// ranges that far apart would rarely come from one and the same behaviour; otherwise the figures
// are "not distinguishable with m and n runs".
import type { Range } from './variant-result.js';

/**
 * The largest chance, under no difference, of ranges that do not overlap for a difference to be
 * called. With m and n runs of one behaviour every order of the m + n values is equally likely, so
 * the two ranges fall apart (either way round) with probability 2·m!·n!/(m+n)!: 3 against 3 is
 * 10%, 3 against 5 is 3.6%, 5 against 5 is 0.8%; 2 against 2 is 33% and one run against anything
 * can never be told apart from noise.
 */
export const SEPARATION_CHANCE = 0.1;

export const SPREAD_RULE =
  'Two figures differ only when their min–max ranges over repetitions do not overlap and ranges that far apart would come from one behaviour ' +
  `with a chance of at most ${SEPARATION_CHANCE * 100}% (m and n runs of one behaviour fall apart with probability 2·m!·n!/(m+n)!: ` +
  '3 against 3 runs 10%, 3 against 5 3.6%, 5 against 5 0.8%); otherwise they are not distinguishable with that many runs. ' +
  'No distribution is assumed: only that the runs are exchangeable.';

/** 2·m!·n!/(m+n)!: the chance that m and n runs of one behaviour give ranges that do not overlap. */
export function separationChance(m: number, n: number): number {
  if (m < 1 || n < 1) return 1;
  // 2 / C(m+n, m), computed as a product to stay finite.
  let c = 1;
  for (let i = 1; i <= m; i++) c *= (n + i) / i;
  return Math.min(1, 2 / c);
}

export type Separation = 'higher' | 'lower' | 'indistinguishable';

export interface RangeComparison {
  /** b against a: higher, lower, or not distinguishable. */
  verdict: Separation;
  /** separationChance of the two run counts. */
  chance: number;
  runs: { a: number; b: number };
  /** The ranges overlap (when not, and the chance is too large, the runs are too few). */
  overlap: boolean;
  /** "not distinguishable with 3 and 1 runs", "higher (ranges apart; 3.6% by chance with 3 and 5 runs)". */
  text: string;
}

export function compareRanges(a: Pick<Range, 'min' | 'max'>, aRuns: number, b: Pick<Range, 'min' | 'max'>, bRuns: number): RangeComparison {
  const chance = separationChance(aRuns, bRuns);
  const above = b.min > a.max;
  const below = b.max < a.min;
  const overlap = !above && !below;
  const runs = { a: aRuns, b: bRuns };
  const pct = `${+(chance * 100).toPrecision(2)}%`;
  if (overlap || chance > SEPARATION_CHANCE) {
    const why = overlap ? 'ranges overlap' : `ranges apart, but ${pct} by chance`;
    return { verdict: 'indistinguishable', chance, runs, overlap, text: `not distinguishable with ${aRuns} and ${bRuns} runs (${why})` };
  }
  const verdict: Separation = above ? 'higher' : 'lower';
  return { verdict, chance, runs, overlap, text: `${verdict} (ranges apart; ${pct} by chance with ${aRuns} and ${bRuns} runs)` };
}
