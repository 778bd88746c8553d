// The run's results.json as the runner builds it: the skeleton written before the first variant
// (status running), the variants aggregated after each repetition, and the verdict at the end.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { collectProvenance } from '../ci/index.js';
import {
  currentRunner,
  judgementOf,
  RESULTS_SCHEMA_VERSION,
  type IsolationRecord,
  type MemoryPressureRecord,
  type RunResults,
  type SkippedVariant,
  type SpireGoroutineRecord,
  type SpireHeapRecord,
  type VariantResult,
} from '../contract/index.js';
import { modeledCosts, variantPlacement } from '../targets/index.js';
import type { PlatformMeasurement } from '../platform/index.js';
import {
  aggregateVariant,
  applyExpectations,
  atLimitWords,
  callCausesOf,
  describeEnvironment,
  kubeletFetchRecord,
  repetitionFigures,
  repetitionPressure,
  type LoadDriver,
  type LoadedScenario,
  type RepMeasurement,
} from '../scenario/index.js';
import { summarizeRepetitionGoroutines, summarizeRepetitionHeap } from '../spire/index.js';
import { PROJECT_ROOT } from '../util/index.js';

function toolVersion(): string {
  try {
    return (JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}

export interface RunResultsStart {
  loaded: LoadedScenario;
  command: string;
  platform: NonNullable<RunResults['platform']>;
  measurement: PlatformMeasurement;
  isolation: IsolationRecord | null;
  cpuBudgetCores: number | null;
  droppedExpectations: string[];
  /** Variants their kind's preflight skipped, with the reason. */
  skipped: SkippedVariant[];
}

/** results.json before the first variant runs: everything but the variants, status running. */
export function startRunResults(o: RunResultsStart): RunResults {
  const { scenario: s, file } = o.loaded;
  return {
    schemaVersion: RESULTS_SCHEMA_VERSION,
    tool: { name: 'attestorm', version: toolVersion() },
    scenario: { name: s.name, description: s.description, file, resolved: s, written: o.loaded.raw, modeledCosts: modeledCosts(s) },
    command: o.command,
    environment: describeEnvironment({
      ...o.measurement,
      ...(o.isolation ? { isolation: o.isolation } : {}),
      ...(o.cpuBudgetCores !== null ? { cpuBudget: { cores: o.cpuBudgetCores, throttledSeconds: null } } : {}),
    }),
    runner: currentRunner(),
    platform: o.platform,
    provenance: collectProvenance({ projectRoot: PROJECT_ROOT, toolVersion: toolVersion(), resolvedScenario: s }) as unknown as Record<string, unknown>,
    startedAt: new Date().toISOString(),
    endedAt: null,
    status: 'running',
    variants: [],
    droppedExpectations: o.droppedExpectations,
    ...(o.skipped.length ? { skippedVariants: o.skipped } : {}),
    verdict: 'inconclusive',
    passed: false,
  };
}

/** The repetitions measured so far, per variant, and what each variant's agent turned out to be. */
export class VariantTally {
  readonly #reps: Map<string, RepMeasurement[]>;
  readonly #described = new Map<string, Partial<VariantResult['agent']>>();
  readonly #heap = new Map<string, SpireHeapRecord[]>();
  readonly #goroutines = new Map<string, SpireGoroutineRecord[]>();
  readonly #pressure = new Map<string, MemoryPressureRecord[]>();

  constructor(
    private readonly s: LoadedScenario['scenario'],
    private readonly load: LoadDriver,
    /** The run folder, where each repetition's heap profiles are read once it has ended. */
    private readonly runDir: string,
  ) {
    this.#reps = new Map(s.variants.map((v) => [v.name, []]));
  }

  add(variant: string, m: RepMeasurement): void {
    const reps = this.#reps.get(variant)!;
    reps.push(m);
    const dir = join(this.runDir, m.runDir);
    const heap = existsSync(dir) ? summarizeRepetitionHeap(dir, reps.length) : null;
    if (heap) this.#heap.set(variant, [...(this.#heap.get(variant) ?? []), heap]);
    const goroutines = existsSync(dir) ? summarizeRepetitionGoroutines(dir, reps.length) : null;
    if (goroutines) this.#goroutines.set(variant, [...(this.#goroutines.get(variant) ?? []), goroutines]);
    const pressure = m.error ? null : repetitionPressure(dir, reps.length, m.callsAtMs ?? 0, m.loadSeconds);
    if (pressure) this.#pressure.set(variant, [...(this.#pressure.get(variant) ?? []), pressure]);
  }

  describe(variant: string, agent: Partial<VariantResult['agent']>): void {
    this.#described.set(variant, agent);
  }

  /** Every variant with at least one repetition, aggregated. */
  summarize(): VariantResult[] {
    return this.s.variants
      .filter((v) => this.#reps.get(v.name)!.length)
      .map((v) => {
        const record = { kind: v.agent.kind, ...variantPlacement(v.agent), ...(this.#described.get(v.name) ?? {}) };
        const result = aggregateVariant(v.name, record, this.#reps.get(v.name)!, (enc) => this.load.summarize(enc), this.s.memoryMeasure);
        const heap = this.#heap.get(v.name);
        const goroutines = this.#goroutines.get(v.name);
        const reps = this.#reps.get(v.name)!;
        const fetches = kubeletFetchRecord(reps.map((r) => r.kubeletFetches));
        const causes = callCausesOf(
          this.runDir,
          reps.map((r) => r.runDir),
        );
        const pressure = this.#pressure.get(v.name);
        const atLimit = pressure ? atLimitWords({ oomKills: result.oomKills, memoryPressure: pressure, runDirs: result.runDirs }) : undefined;
        return {
          ...result,
          ...(pressure ? { memoryPressure: pressure } : {}),
          ...(atLimit ? { atLimit } : {}),
          repetitionFigures: reps.map((r, i) => repetitionFigures(r, i + 1, this.s.memoryMeasure)),
          ...(heap ? { spireHeap: heap } : {}),
          ...(goroutines ? { spireGoroutines: goroutines } : {}),
          ...(fetches ? { kubeletFetches: fetches } : {}),
          ...(causes ? { callCauses: causes } : {}),
        };
      });
  }
}

/** Status, verdict and pass of a run that has ended (`failure`: why the platform ended it early); nothing that did not run may pass. */
export function concludeResults(results: RunResults, s: LoadedScenario['scenario'], interrupted: boolean, failure: string | null = null): void {
  const verdict = applyExpectations(results.variants, s.expect, s.failOnInconclusive);
  const ranAll = s.variants.every((v) => results.variants.some((r) => r.name === v.name && !r.error));
  const allFailed = results.variants.length > 0 && results.variants.every((p) => !!p.error);
  // A run the platform ended (a cluster's node or engine gone) failed, whatever ran before.
  results.status = interrupted ? 'interrupted' : allFailed || failure ? 'failed' : 'complete';
  if (interrupted) results.statusDetail = `interrupted after ${results.variants.length} of ${s.variants.length} variant(s) had data`;
  else if (failure)
    results.statusDetail = `${failure} (${results.variants.length} of ${s.variants.length} variant(s) had data; their samples are in the run folder)`;
  results.judgement = judgementOf(results.variants, results.droppedExpectations);
  // An interrupted or partial run is never passed; one that judged no rule is a comparison, not a pass.
  if (verdict === 'failed') results.verdict = 'failed';
  else if (results.judgement.judged === 0 && results.status === 'complete') results.verdict = 'compared';
  else results.verdict = results.status === 'complete' && ranAll ? verdict : 'inconclusive';
  results.passed = results.verdict !== 'compared' && results.status === 'complete' && ranAll && results.variants.every((v) => v.passed);
  results.endedAt = new Date().toISOString();
}
