// Scenarios, the runner and the run folder's data contract.
export * from './results.js';
export { scenarioSchema, overridesSchema, overrideKeys, scenarioPlacements, PLACEMENT_NAMES, EXTERNAL_PLACEMENT, EXPECT_KEYS } from './schema.js';
export type { Scenario, ScenarioInput, ExpectInput, Overrides, ScenarioPlacement } from './schema.js';
export { parseScenario, parseOverrides, readScenarioFile, scenarioProblems } from './load-scenario.js';
export type { LoadedScenario } from './load-scenario.js';
export { scenarioJsonSchema, scenarioJsonSchemaText, writeScenarioJsonSchema, SCENARIO_JSON_SCHEMA_PATH } from './json-schema.js';
export { evaluateExpectations, applyExpectations, effectivePeak } from './expectations.js';
export { aggregatePlacement } from './aggregate.js';
export type { RepMeasurement, LatencySummarizer } from './aggregate.js';
export { judgeExit, OomCounter } from './oom-detector.js';
export type { DeathCause, DeathVerdict, ExitFacts } from './oom-detector.js';
export { RestartBackoff } from './backoff.js';
export type { BackoffOptions } from './backoff.js';
