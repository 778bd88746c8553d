// A step's mark from the named variant's verdict, as the run judged it: passed is good, failed is
// bad, inconclusive is a skip, and so is anything that kept the variant from being judged (its agent
// did not start, the run failed). Across --repetitions the verdict is the run's own over all of
// them: OOM kills are summed (one killed repetition fails `oomKilled: false`), peaks are medians.
import type { RunResults, Verdict, VariantResult } from '../contract/index.js';
import type { Mark } from './git-bisect.js';

/** The figures a bisect's reports show per step, from the variant's record in results.json. */
export interface StepFigures {
  peakMemoryBytes: number | null;
  memoryLimitBytes: number;
  memoryMeasure: string;
  oomKills: number;
  okRps: number;
  kubeletRequestsPerSecond: number | null;
  repetitions: number;
}

export interface StepJudgement {
  mark: Mark;
  /** Why, in the words of the expectations (or of what kept the variant from being judged). */
  reason: string;
  verdict: Verdict | null;
  figures: StepFigures | null;
}

export function stepFigures(v: VariantResult): StepFigures {
  return {
    peakMemoryBytes: v.peakMemoryBytes,
    memoryLimitBytes: v.memoryLimitBytes,
    memoryMeasure: v.memoryMeasure,
    oomKills: v.oomKills,
    okRps: v.okRps,
    kubeletRequestsPerSecond: v.kubeletRequestsPerSecond ?? null,
    repetitions: v.runDirs.length,
  };
}

/** The messages of the expectations with this verdict, joined. */
const said = (v: VariantResult, verdict: Verdict) =>
  v.expectations
    .filter((e) => e.verdict === verdict)
    .map((e) => `${e.name}: ${e.message}`)
    .join('; ');

/** Judges a finished run (status complete or failed; an interrupted one is not a step). */
export function judgeStep(results: RunResults, variant: string): StepJudgement {
  const v = results.variants.find((x) => x.name === variant);
  if (!v) {
    const skipped = results.skippedVariants?.find((k) => k.name === variant);
    const why = skipped ? skipped.reason : (results.statusDetail ?? `the run ended ${results.status} before ${variant} ran`);
    return { mark: 'skip', reason: `not judged: ${why}`, verdict: null, figures: null };
  }
  const figures = stepFigures(v);
  if (v.error) return { mark: 'skip', reason: `not judged: the variant could not be run: ${v.error}`, verdict: v.verdict, figures };
  if (results.status === 'failed')
    return { mark: 'skip', reason: `not judged: the run failed: ${results.statusDetail ?? 'no reason recorded'}`, verdict: v.verdict, figures };
  if (v.verdict === 'passed') return { mark: 'good', reason: said(v, 'passed') || 'passed', verdict: v.verdict, figures };
  if (v.verdict === 'failed') return { mark: 'bad', reason: said(v, 'failed'), verdict: v.verdict, figures };
  return { mark: 'skip', reason: `inconclusive: ${v.notJudged ?? said(v, 'inconclusive')}`, verdict: v.verdict, figures };
}
