// The reference agent as a target kind: the project's own agent, whose limiter placement and key
// are the variant's choice; started locally from its bundle, in a cluster from the project's image.
import { resolve } from 'node:path';
import { ConfigError } from '../../errors.js';
import { builtinCapabilities } from '../../fault/index.js';
import { defineTargetKind, type ClusterAgentSpec, type ClusterLayout } from '../kind.js';
import { buildAgentConfig, referenceModeledCosts } from './agent-config.js';
import { referenceLimiter } from './limiter.js';
import { bundleReferenceAgent, referenceProgramProblem, referenceTarget } from './local.js';
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
  // Only a binDir variant needs anything of this machine: its program, checked before anything starts.
  preflight: async (a, where) => {
    if (a.binDir === undefined) return { problems: [], agent: a };
    const problem = referenceProgramProblem(a.binDir, where);
    return { problems: problem ? [problem] : [], agent: { ...a, binDir: resolve(a.binDir) } };
  },
  prepare: bundleReferenceAgent,
  start: referenceTarget,
  cluster: (a, variant, layout) => {
    if (a.binDir !== undefined)
      throw new ConfigError(
        `variants.${variant}.agent.binDir: a reference agent from a folder of its own runs on this machine only (a cluster runs the project's image); run this variant locally`,
      );
    return clusterSpec(a, layout);
  },
});

function clusterSpec(a: ReferenceAgent, layout: ClusterLayout): ClusterAgentSpec {
  return {
    kind: 'reference',
    memoryLimitBytes: a.memoryLimit,
    ...referenceLimiter(a),
    rateLimits: { ...a.rateLimits },
    referenceConfig: buildAgentConfig(a, { socket: layout.socket, kubeletUrl: layout.kubeletUrl, tokenFile: null, caFile: null }),
    // Only a k8s attestor reads the kubelet's /pods; a unix-only agent is not slowed by the node's other pods.
    fillerPods: a.attestors.includes('k8s') ? (a.kubelet.fillerPods ?? null) : 0,
  };
}

export { agentConfigYaml, buildAgentConfig } from './agent-config.js';
export type { AgentEndpoints } from './agent-config.js';
export { referenceLauncher, REFERENCE_AGENT_BUNDLE } from './local.js';
export type { ReferenceAgent } from './schema.js';
