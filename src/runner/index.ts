// `attestorm run` for one scenario: the runner drives every repetition × variant on a platform
// (src/platform), writes results.json as it goes and judges the expectations at the end.
export { runScenario, exitCodeOf } from './runner.js';
export type { RunScenarioOptions, RunScenarioOutcome } from './runner.js';
