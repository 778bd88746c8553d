// Where a run's repetitions happen, one folder per platform: local/ (this machine's sandbox) and
// cluster/ (a Kubernetes cluster). platform.ts is what the runner asks of each; repetition.ts is the
// one repetition both run, start → warm-up → storm with its faults → finish, with the steps they share.
export type { LoadSite, Platform, PlatformMeasurement, PlatformRun, PreparedRun, RepetitionContext } from './platform.js';
export { RunEndingFailure } from './platform.js';
export * from './local/index.js';
export * from './cluster/index.js';
