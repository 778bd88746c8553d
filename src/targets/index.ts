// Agents under test: one plug-in per kind (reference/, spire/, external/) holding its scenario
// schema, what it inherits from the shared agent block, its limiter rule, its local start, its
// cluster spec and its faults; the registry that picks one by name; the supervisor that owns a
// started agent like a kubelet.
export {
  AGENT_KINDS,
  createTarget,
  DEFAULT_AGENT_KIND,
  modeledCosts,
  prepareTargets,
  targetKind,
  targetKinds,
  TARGET_KINDS,
  variantPlacement,
} from './registry.js';
export type { AgentKindName, TargetMaker, VariantAgent } from './registry.js';
export { agentKindSummary, resolveVariantAgent, sharedAgentShape } from './resolve-agent.js';
export { defineTargetKind } from './kind.js';
export type { AgentOf, AgentPreflight, ClusterAgentSpec, ClusterLayout, LimiterChoice, TargetKind } from './kind.js';
export type { AgentTarget, TargetContext } from './target.js';
export type { CpuShare, KubeletEmulation } from './common-schema.js';
export { podListEmulatorOptions } from './pod-list-schema.js';
export type { PodList, PodListInput } from './pod-list-schema.js';
export { AgentSupervisor } from './agent-supervisor.js';
export type { AgentLaunch, AgentLauncher, AgentReady, AgentSupervisorOptions } from './agent-supervisor.js';
export { agentConfigYaml, buildAgentConfig, referenceLauncher, REFERENCE_AGENT_BUNDLE } from './reference/index.js';
export type { AgentEndpoints, ReferenceAgent } from './reference/index.js';
export { SPIRE_PROBE_GID, spireLimiter, spireTarget } from './spire/index.js';
export type { SpireAgent } from './spire/index.js';
export type { ExternalAgent } from './external/index.js';
export { judgeExit } from './oom-detector.js';
export type { DeathCause, DeathVerdict, ExitFacts } from './oom-detector.js';
export { RestartBackoff } from './backoff.js';
export type { BackoffOptions } from './backoff.js';
