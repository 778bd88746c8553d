// Reading results.json of any version this attestorm understands: schemaVersion 1 (placements)
// is converted to 2 (variants) on load, so reports render old run folders unchanged.
import type { RunResults } from './results.js';
import type { ExpectationResult, VariantResult } from './variant-result.js';

type V1Expectation = { name: string; expected: unknown; actual: unknown; passed: boolean; message: string };
type V1Placement = Omit<VariantResult, 'agent' | 'spread' | 'deaths' | 'verdict' | 'expectations'> & { expectations: V1Expectation[] };
type V1Results = Omit<RunResults, 'schemaVersion' | 'variants' | 'runner' | 'verdict' | 'droppedExpectations'> & {
  schemaVersion: 1;
  placements: V1Placement[];
};

const PLACEMENTS = new Set(['pre-attestation', 'post-attestation', 'disabled']);

export function upgradeResults(raw: Record<string, unknown>): RunResults {
  if (raw.schemaVersion === 2) return raw as unknown as RunResults;
  const v1 = raw as unknown as V1Results;
  const variants: VariantResult[] = (v1.placements ?? []).map((p) => {
    const expectations: ExpectationResult[] = (p.expectations ?? []).map((e) => ({
      name: e.name,
      expected: e.expected,
      actual: e.actual,
      verdict: e.passed ? 'passed' : 'failed',
      basis: 'measured',
      message: e.message,
    }));
    return {
      ...p,
      agent: PLACEMENTS.has(p.name)
        ? { kind: 'reference', placement: p.name as VariantResult['agent']['placement'], key: null }
        : { kind: 'external', placement: null, key: null },
      spread: {},
      deaths: [],
      expectations,
      verdict: p.error || !p.passed ? 'failed' : 'passed',
    };
  });
  return {
    ...(v1 as unknown as RunResults),
    schemaVersion: 2,
    runner: { pid: 0, hostname: '', startTicks: null },
    variants,
    droppedExpectations: [],
    verdict: v1.passed ? 'passed' : 'failed',
    statusDetail: 'read from a schemaVersion 1 run folder (placements)',
  };
}
