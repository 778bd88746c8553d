// Real SPIRE beside attestorm: find the user's binaries, run a local spire-server and spire-agent
// (configs generated, logs kept), register sandbox pods, prove a pod gets an SVID, read SPIRE's
// metrics. attestorm ships no SPIRE; see docs/spire.md.
export { findSpireBinaries, spireVersion } from './binaries.js';
export type { FindSpireOptions, SpireBinaries, SpireBinaryName } from './binaries.js';
export { renderHcl, mergeHcl } from './hcl.js';
export type { HclTree, HclValue, HclScalar } from './hcl.js';
export { renderServerConfig, serverConfigTree } from './config-server.js';
export type { ServerConfigInput } from './config-server.js';
export { renderAgentConfig, agentConfigTree, kubeletAccessFor } from './config-agent.js';
export type { AgentConfigInput, KubeletAccess } from './config-agent.js';
export { limiterEnabled, SPIRE_RATE_LIMIT_KEYS, SPIRE_RATE_LIMIT_METHODS } from './options.js';
export type { SpireRateLimits, SpireRateLimitKey } from './options.js';
export { startSpireServer, SpireServer, MAX_SOCKET_PATH } from './server.js';
export type { StartSpireServerOptions } from './server.js';
export { workloadIdFor, entriesJson, checkBatchOutput, checkDeleteOutput } from './entries.js';
export type { PodForEntry, EntryJson } from './entries.js';
export {
  prepareSpireAgent,
  startSpireAgent,
  SpireAgentPlan,
  RunningSpireAgent,
  assertLimiterLogged,
  limitedMethodsInLog,
  limiterAnnouncement,
  joinTokenRefusal,
  placementMismatch,
} from './agent.js';
export type { PrepareSpireAgentOptions, StartSpireAgentOptions, SpireAgentCommand } from './agent.js';
export { probeSvid, asGroup, inPod, SVID_PROBE_BUNDLE } from './svid-probe.js';
export type { ProbeSvidOptions, ProbeResult, ProbeSpawn, ProbePodHost } from './svid-probe.js';
export { scrapeSpireMetrics, spireMetricsSampleFrom, spireMetricsSampler } from './metrics.js';
export { spireAgentLauncher } from './launcher.js';
export type { SpireAgentLauncher, SpireLaunch, SpireReady } from './launcher.js';
export type { SpireMetricsSample, SpireRuntimeFigures } from './metrics.js';
export { spireHeapProfileSampler, heapProfileFile, heapProfileTime } from './heap-profile.js';
export { heapByOwner, heapOwnerOf, SPIRE_HEAP_RULES } from './heap-owners.js';
export type { HeapByOwner } from './heap-owners.js';
export { summarizeHeapProfile, summarizeRepetitionHeap } from './heap-summary.js';
export { spireGoroutineProfileSampler, goroutineProfileFile, goroutineProfileTime } from './goroutine-profile.js';
export { goroutineOwnerOf, goroutinesByOwner, parseGoroutineProfile, SPIRE_GOROUTINE_RULES } from './goroutine-owners.js';
export type { GoroutineStack } from './goroutine-owners.js';
export { summarizeGoroutineProfile, summarizeRepetitionGoroutines } from './goroutine-summary.js';
export { lastLogLines, quoteLog } from './log-tail.js';
export { freeLoopbackPorts } from './free-port.js';
export { parseSpireVersion, compareVersions, formatVersion, spireAgentGrammar, grammarProblems, versionOf, OLDEST_KNOWN_RELEASE } from './release.js';
export type { SpireVersion, SpireAgentGrammar, SpireSettingsAsked } from './release.js';
export { preflightSpireVariant } from './preflight.js';
export type { SpirePreflight, SpireVariantAsked } from './preflight.js';
