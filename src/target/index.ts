// Agents under test: a registry of target kinds (reference, external; spire registers itself), the
// supervisor that owns an agent process like a kubelet, and the reference agent's config.
import './target-reference.js';
import './target-external.js';
import './target-spire.js';

export { createTarget, registerTarget, targetKinds } from './target.js';
export type { AgentTarget, TargetContext, TargetFactory } from './target.js';
export { AgentSupervisor } from './agent-supervisor.js';
export type { AgentLaunch, AgentLauncher, AgentReady, AgentSupervisorOptions } from './agent-supervisor.js';
export { agentCgroupFor, referenceLauncher, setReferenceAgentBundle } from './target-reference.js';
export { spireTarget, SPIRE_PROBE_GID } from './target-spire.js';
export { buildAgentConfig, agentConfigYaml, modeledCosts, deepMerge } from './agent-config.js';
export type { AgentEndpoints } from './agent-config.js';
export { judgeExit } from './oom-detector.js';
export type { DeathCause, DeathVerdict, ExitFacts } from './oom-detector.js';
export { RestartBackoff } from './backoff.js';
export type { BackoffOptions } from './backoff.js';
