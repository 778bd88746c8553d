// Judging bystanders: the scenario's two expectation keys (minBystanderSuccess, maxBystanderGap),
// their evaluation against a variant's BystanderSummary, and the sentence a verdict leads with.
// For the runner to plug in: the keys go into the expect schema, the evaluation beside the others.
import { z } from 'zod';
import type { BystanderSummary, ExpectationResult } from '../contract/index.js';
import { formatDuration, zDuration } from '../util/index.js';

/** Spread into the scenario's expect block schema. */
export const bystanderExpectShape = {
  minBystanderSuccess: z
    .number({ error: 'must be a ratio between 0 and 1' })
    .min(0, 'must be a ratio between 0 and 1')
    .max(1, 'must be a ratio between 0 and 1')
    .optional()
    .describe('Bystander calls that succeeded, as a share of all their calls, at least this (0..1); needs load.bystanders'),
  maxBystanderSuccess: z
    .number({ error: 'must be a ratio between 0 and 1' })
    .min(0, 'must be a ratio between 0 and 1')
    .max(1, 'must be a ratio between 0 and 1')
    .optional()
    .describe(
      'Bystander calls that succeeded at most this share (0..1): checks that a design starves them, e.g. a limiter key the storm shares; needs load.bystanders',
    ),
  maxBystanderGap: zDuration.optional().describe('The longest time a bystander worker went without a successful call, at most this; needs load.bystanders'),
};

export interface BystanderExpect {
  minBystanderSuccess?: number;
  maxBystanderSuccess?: number;
  /** Milliseconds (the schema parses "2s"). */
  maxBystanderGap?: number;
}

/** Bystander rules in a scenario without bystanders, as zod issues (key + message) for a superRefine. */
export function bystanderExpectIssues(expect: BystanderExpect | undefined, hasBystanders: boolean): Array<{ key: keyof BystanderExpect; message: string }> {
  if (hasBystanders || !expect) return [];
  return (['minBystanderSuccess', 'maxBystanderSuccess', 'maxBystanderGap'] as const)
    .filter((k) => expect[k] !== undefined)
    .map((key) => ({ key, message: 'needs bystanders to measure: set load.bystanders (e.g. load.bystanders: {}) or drop the rule' }));
}

/** The same as "<path>.<key> <message>" lines, for a ConfigError before anything starts. */
export function bystanderExpectProblems(expect: BystanderExpect | undefined, hasBystanders: boolean, path = 'expect'): string[] {
  return bystanderExpectIssues(expect, hasBystanders).map((i) => `${path}.${i.key} ${i.message}`);
}

const pct = (r: number) => `${(r * 100).toFixed(1)}%`;

/** The bystander rules of one variant's expect block; `b` absent = no bystanders ran. */
export function evaluateBystanderExpectations(expect: BystanderExpect | undefined, b: BystanderSummary | undefined): ExpectationResult[] {
  if (!expect) return [];
  const out: ExpectationResult[] = [];
  if (expect.minBystanderSuccess !== undefined) {
    const min = expect.minBystanderSuccess;
    if (!b || b.calls === 0) {
      out.push({
        name: 'minBystanderSuccess',
        expected: min,
        actual: null,
        verdict: 'inconclusive',
        basis: 'none',
        message: b ? 'no bystander call completed' : 'no bystanders ran',
      });
    } else {
      const ok = b.successRatio >= min;
      out.push({
        name: 'minBystanderSuccess',
        expected: min,
        actual: +b.successRatio.toFixed(4),
        verdict: ok ? 'passed' : 'failed',
        basis: 'measured',
        message: `bystanders served ${pct(b.successRatio)} (${b.ok}/${b.calls}) ${ok ? '>=' : '<'} ${pct(min)}`,
      });
    }
  }
  if (expect.maxBystanderSuccess !== undefined) {
    const max = expect.maxBystanderSuccess;
    if (!b || b.calls === 0) {
      out.push({
        name: 'maxBystanderSuccess',
        expected: max,
        actual: null,
        verdict: 'inconclusive',
        basis: 'none',
        message: b ? 'no bystander call completed' : 'no bystanders ran',
      });
    } else {
      const ok = b.successRatio <= max;
      out.push({
        name: 'maxBystanderSuccess',
        expected: max,
        actual: +b.successRatio.toFixed(4),
        verdict: ok ? 'passed' : 'failed',
        basis: 'measured',
        message: `bystanders served ${pct(b.successRatio)} (${b.ok}/${b.calls}) ${ok ? '<=' : '>'} ${pct(max)}`,
      });
    }
  }
  if (expect.maxBystanderGap !== undefined) {
    const max = expect.maxBystanderGap;
    if (!b) {
      out.push({ name: 'maxBystanderGap', expected: formatDuration(max), actual: null, verdict: 'inconclusive', basis: 'none', message: 'no bystanders ran' });
    } else {
      const ok = b.longestGapMs <= max;
      out.push({
        name: 'maxBystanderGap',
        expected: formatDuration(max),
        actual: b.longestGapMs,
        verdict: ok ? 'passed' : 'failed',
        basis: 'measured',
        message: `longest bystander gap without a success ${formatDuration(b.longestGapMs)} ${ok ? '<=' : '>'} ${formatDuration(max)}`,
      });
    }
  }
  return out;
}

/** "bystanders served: pre-attestation 100%, post-attestation 41%, disabled 12%"; null when none ran. */
export function bystandersServedSentence(variants: ReadonlyArray<{ name: string; bystanders?: BystanderSummary | null }>): string | null {
  const parts = variants.filter((v) => v.bystanders && v.bystanders.calls > 0).map((v) => `${v.name} ${Math.round(v.bystanders!.successRatio * 100)}%`);
  return parts.length ? `bystanders served: ${parts.join(', ')}` : null;
}
