// The reference agent as a target kind: the project's own agent, whose limiter placement and key
// are the variant's choice; started locally from its bundle, in a cluster from the project's image.
import { builtinCapabilities } from '../../fault/index.js';
import { defineTargetKind } from '../kind.js';
import { buildAgentConfig, referenceModeledCosts } from './agent-config.js';
import { referenceLimiter } from './limiter.js';
import { bundleReferenceAgent, referenceTarget } from './local.js';
import { referenceAgentSchema, referenceInherits, referenceSharedShape, type ReferenceAgent } from './schema.js';

export const referenceKind = defineTargetKind<ReferenceAgent, string>({
  kind: 'reference',
  summary: "reference (default): the project's agent",
  schema: referenceAgentSchema,
  shared: referenceSharedShape,
  inherits: referenceInherits,
  limiter: referenceLimiter,
  started: true,
  pinnable: true,
  cpu: (a) => a.cpu,
  kubelet: (a) => a.kubelet,
  faults: (variant, _a, host, reason) => builtinCapabilities(variant, host, reason),
  modeledCosts: referenceModeledCosts,
  prepare: bundleReferenceAgent,
  start: referenceTarget,
  cluster: (a, _variant, layout) => ({
    kind: 'reference',
    memoryLimitBytes: a.memoryLimit,
    ...referenceLimiter(a),
    rateLimits: { ...a.rateLimits },
    referenceConfig: buildAgentConfig(a, { socket: layout.socket, kubeletUrl: layout.kubeletUrl, tokenFile: null, caFile: null }),
    // Only a k8s attestor reads the kubelet's /pods; a unix-only agent is not slowed by the node's other pods.
    fillerPods: a.attestors.includes('k8s') ? (a.kubelet.fillerPods ?? null) : 0,
  }),
});

export { agentConfigYaml, buildAgentConfig } from './agent-config.js';
export type { AgentEndpoints } from './agent-config.js';
export { referenceLauncher, REFERENCE_AGENT_BUNDLE } from './local.js';
export type { ReferenceAgent } from './schema.js';
