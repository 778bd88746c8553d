// A variant's record in results.json as the expectation tests judge it: a reference agent that
// survived at 128 MiB with a 50 MiB peak, its figures overridden per test.
import type { VariantResult } from '../../src/contract/index.js';

const MiB = 2 ** 20;

export function variantResult(over: Partial<VariantResult> = {}): VariantResult {
  const name = over.name ?? 'variant';
  return {
    name,
    agent: { kind: 'reference', placement: 'disabled', key: null },
    runDirs: [`${name}.r1`],
    memoryLimitBytes: 128 * MiB,
    peakMemoryBytes: 50 * MiB,
    memoryMeasure: 'working-set',
    peaks: { workingSetBytes: 50 * MiB, usageBytes: 60 * MiB, rssBytes: 45 * MiB },
    oomKills: 0,
    restarts: 0,
    downtimeSeconds: 0,
    okRps: 40,
    rejectedRps: 100,
    errorRps: 0,
    deadlineExceededRps: 0,
    spread: {},
    deaths: [],
    latency: {},
    peakInflightAttestations: 3,
    rejectionsByKeyType: {},
    workerMemoryBytes: null,
    expectations: [],
    verdict: 'failed',
    passed: false,
    ...over,
  };
}
