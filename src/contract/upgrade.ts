// Reading results.json of any version this attestorm understands, converted on load so reports
// render old run folders unchanged: schemaVersion 1 (placements) to 2 (variants), 2 (peaks in
// cgroup usage only) to 3 (the peak in a named measure, beside the peaks of every measure).
import { isPlacementName } from './limiter-vocabulary.js';
import type { RunResults } from './results.js';
import type { ExpectationResult, VariantResult } from './variant-result.js';

type V1Expectation = { name: string; expected: unknown; actual: unknown; passed: boolean; message: string };
type V1Placement = Omit<VariantResult, 'agent' | 'spread' | 'deaths' | 'verdict' | 'expectations' | 'memoryMeasure' | 'peaks'> & {
  expectations: V1Expectation[];
};
type V1Results = Omit<RunResults, 'schemaVersion' | 'variants' | 'runner' | 'verdict' | 'droppedExpectations'> & {
  schemaVersion: 1;
  placements: V1Placement[];
};

type V2Variant = Omit<VariantResult, 'memoryMeasure' | 'peaks'>;
type V2Results = Omit<RunResults, 'schemaVersion' | 'variants'> & { schemaVersion: 2; variants: V2Variant[] };

export function upgradeResults(raw: Record<string, unknown>): RunResults {
  if (raw.schemaVersion === 3) return raw as unknown as RunResults;
  if (raw.schemaVersion === 2) return fromV2(raw as unknown as V2Results);
  return fromV2(fromV1(raw));
}

/** Version 2 recorded the kernel's high-water mark of cgroup usage (VmHWM when emulated) as the peak. */
function fromV2(v2: V2Results): RunResults {
  const resolved = v2.scenario?.resolved;
  return {
    ...v2,
    // Its scenario had no memoryMeasure, and measured usage: said there too, so a run without
    // variants, or repetitions read from their samples alone, are taken as usage as well.
    ...(resolved && typeof resolved === 'object' ? { scenario: { ...v2.scenario, resolved: { memoryMeasure: 'usage', ...resolved } } } : {}),
    schemaVersion: 3,
    variants: (v2.variants ?? []).map((v) => ({
      ...v,
      memoryMeasure: 'usage',
      peaks: { workingSetBytes: null, usageBytes: v.peakMemoryBytes, rssBytes: null },
    })),
  };
}

function fromV1(raw: Record<string, unknown>): V2Results {
  const v1 = raw as unknown as V1Results;
  const variants: V2Variant[] = (v1.placements ?? []).map((p) => {
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
      agent: isPlacementName(p.name) ? { kind: 'reference', placement: p.name, key: null } : { kind: 'external', placement: null, key: null },
      spread: {},
      deaths: [],
      expectations,
      verdict: p.error || !p.passed ? 'failed' : 'passed',
    };
  });
  return {
    ...(v1 as unknown as V2Results),
    schemaVersion: 2,
    runner: { pid: 0, hostname: '', startTicks: null },
    variants,
    droppedExpectations: [],
    verdict: v1.passed ? 'passed' : 'failed',
    statusDetail: 'read from a schemaVersion 1 run folder (placements)',
  };
}
