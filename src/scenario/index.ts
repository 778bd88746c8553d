// Scenarios: the schema (variants), reading scenario files, what one repetition measures and how
// repetitions aggregate, the expectations and the verdict. Where repetitions run is src/platform;
// the runner that drives them is src/runner.
export * from '../contract/index.js';
export { scenarioSchema, overridesSchema, overrideKeys, scenarioVariantNames, selectVariants, EXTERNAL_PLACEMENT, EXPECT_KEYS } from './schema.js';
export type { Scenario, ScenarioInput, ExpectInput, Overrides, Variant } from './schema.js';
// The agent of a variant is a target kind's: its schema and rules live in src/targets.
export { AGENT_KINDS, resolveVariantAgent, variantPlacement } from '../targets/index.js';
export type { ExternalAgent, ReferenceAgent, SpireAgent, VariantAgent } from '../targets/index.js';
export { applySettings, parseScenario, parseOverrides, readScenarioFile, removeKeys, scenarioProblems } from './load-scenario.js';
export type { LoadedScenario } from './load-scenario.js';
export { scenarioJsonSchema, scenarioJsonSchemaText, writeScenarioJsonSchema, SCENARIO_JSON_SCHEMA_PATH } from './json-schema.js';
export { schemaRefFrom, starterScenario, STARTER_FILE } from './starter.js';
export { evaluateExpectations, applyExpectations, combineVerdicts } from './expectations.js';
export { callCausesOf } from './call-causes.js';
export { atLimitWords, repetitionPressure, worstPressure } from './memory-pressure.js';
export { aggregateVariant, median, range } from './aggregate.js';
export { answerTimes, kubeletFetchRecord } from './kubelet-fetch-record.js';
export { repetitionFigures } from './repetition-figures.js';
export type { RepMeasurement, LatencySummarizer } from './aggregate.js';
export { completeRejections, RejectionTotals, UNATTRIBUTED } from './rejection-totals.js';
export { Timeline } from './timeline.js';
export { faultRecordsOf, loadClientRecord, newMeasurement } from './measurement.js';
export { describeEnvironment } from './environment.js';
export { countsAsOomKill, deathRecord, oomKillsOf, type DeathCause } from './death-record.js';
export { stormLoadDriver, loadOptionsFor } from './load-driver-storm.js';
export type { LoadDriver, LoadPhaseOptions, LoadPhaseResult, LoadSite } from './load-driver.js';
export { comparisonTable, ESSENTIAL_COLUMNS, WIDE_COLUMNS, type TableLayout } from './summary-table.js';
export { Progress } from './progress.js';
export { createRunDir, defaultRunDir, writeResults, writeScenarioCopy, linkLatest, variantDirName } from './run-folder.js';
export { planIsolation, isolateRunner } from './cpu-isolation.js';
export type { CpusetPlan } from './cpu-isolation.js';
export { preflightVariants } from './variant-preflight.js';
export type { PreflightOutcome } from './variant-preflight.js';
