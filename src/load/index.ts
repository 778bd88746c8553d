// The forking-worker load generator: N pods × M worker processes against any Workload API socket.
export { runLoad } from './run-load.js';
export type { LoadSummary, LoadEnv } from './run-load.js';
export { podStartTimeoutMs, podConfigFor } from './run-load-plan.js';
// Burst faults: a wave of extra storm pods while the load runs, and the storm's live size per second.
export { waveSizes } from './storm-wave.js';
export type { StormControl, StormWave, StormWaveEnd } from './storm-wave.js';
export { LiveStorm } from './live-storm.js';
export {
  validateLoadOptions,
  parseMethodMix,
  loadOptionsSchema,
  LOAD_DEFAULTS,
  LOAD_DESCRIPTIONS,
  LOAD_METHODS,
  LOAD_CLIENTS,
  CLIENT_DESCRIPTION,
  CONNECTION_MODES,
  RETRY_POLICIES,
  MAX_WORKERS_TOTAL,
} from './options.js';
export type { LoadOptions, ResolvedLoadOptions, ConnectionMode, LoadClient, LoadMethod, RetryPolicy } from './options.js';
// The options as flags, once: `attestorm load` and the generator pods' command lines.
export { LOAD_FLAGS, GENERATOR_FLAGS, GENERATOR_LOAD_KEYS, formatLoadFlags, parseLoadFlags, problemAsFlag, generatorLoadFromFlags } from './load-flags.js';
export type { LoadFlag, GeneratorLoad } from './load-flags.js';
export { decodeHistogram, encodeHistogram, mergeEncodedHistograms, newHistogram, summarizeHistogram } from './histograms.js';
export { localPodHost } from './pod-host.js';
export type { LoadPod, PodHost } from './pod-host.js';
export type { PodTotals } from './aggregator.js';
export { readCpuSeconds, readPssAndPrivate, samplePss } from './memory.js';
// For benchmarks that start bare workers (idle memory): the bundles and flags runLoad uses.
export { loadBundles, LOAD_BUNDLES, WORKER_ENV, WORKER_EXEC_ARGV, WORKER_NICE } from './bundle.js';
export type { LoadBundles } from './bundle.js';
// The native worker built ahead of time (the project's image, which has no compiler at run time).
export { prebuildNativeWorker } from './native/build.js';
export type { WorkerConfig } from './worker/messages.js';
export type { MemoryStats } from './memory.js';
export { formatSummaryTable, formatStatusLine, formatBystanderLine } from './format.js';
// Bystanders: well-behaved pods beside the storm (scenario key load.bystanders), counted apart.
export {
  bystandersSchema,
  parseBystanders,
  bystanderLoadOptions,
  bystanderSandboxOptions,
  validateBystanderLoadOptions,
  BYSTANDER_DEFAULTS,
  BYSTANDER_UID_MODES,
} from './bystanders-schema.js';
export type { Bystanders, BystandersInput, BystanderLoadOptions, ResolvedBystanderLoadOptions, BystanderUidMode } from './bystanders-schema.js';
export { mergeBystanderRuns, summarizeBystanders, latencyOf, bystanderRunOf, toBystanderSecond } from './bystanders-summary.js';
export type { BystanderRun, LoadSampleWithBystanders } from './bystanders-summary.js';
export {
  bystanderExpectShape,
  bystanderExpectIssues,
  bystanderExpectProblems,
  evaluateBystanderExpectations,
  bystandersServedSentence,
} from './bystanders-verdict.js';
export type { BystanderExpect } from './bystanders-verdict.js';
// Kind mode runs one pod process per generator pod and merges pods' seconds on the runner.
export { LoadAggregator } from './aggregator.js';
export { PodHandle } from './pod-handle.js';
export type { IntervalData, PodConfig } from './worker/messages.js';
// Whether the machine can hold a load's processes (memory, PIDs, file descriptors), before any starts.
export { capacityProblems, checkLoadCapacity, loadPlanSize, readHostCapacity, WORKER_COSTS, POD_PROCESS_COST } from './capacity.js';
export type { HostCapacity, LoadPlanSize, ProcessCost } from './capacity.js';
