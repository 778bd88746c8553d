// The run folder's data contract (results.json and the NDJSON sample lines) and the limiter vocabulary
// its records speak, at the bottom of the import graph: the agent, the runner, the targets, the
// samplers and the reports depend on it, not on each other.
export * from './terms.js';
export * from './limiter-vocabulary.js';
export * from './results.js';
export * from './variant-result.js';
export * from './sample-lines.js';
export * from './memory-measure.js';
export * from './working-set-parts.js';
export * from './spire-heap.js';
export * from './spire-goroutines.js';
export * from './kubelet-fetches.js';
export * from './spread-rule.js';
export * from './repetition-figures.js';
export * from './cluster-topology.js';
export { currentRunner, processStartTicks, runnerState } from './run-liveness.js';
export { upgradeResults } from './upgrade.js';
export { MODEL_DEFAULTS, modeledCostsInWords, modeledCostsSentences, type ModeledCostsLine } from './modeled-costs.js';
export { judgementOf, judgementSentence } from './judgement.js';
