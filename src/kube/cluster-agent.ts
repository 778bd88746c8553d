// What each agent kind brings to a cluster beyond its manifest spec (ClusterAgentSpec): its objects,
// the pods of its own beside the agent, what the generators and the runner do for it. The renderer
// and the runner ask here instead of naming a kind; a kind that runs in a cluster is one entry below.
import type { KubeConfig } from '@kubernetes/client-node';
import type { KubeObject, RenderContext } from './render/objects.js';
import { renderReferenceAgent } from './render/agent-reference.js';
import { renderSpire } from './render/agent-spire.js';
import { createGeneratorEntry } from './spire-entries.js';
import type { ClusterAgentKind } from './render/variant.js';

export interface ClusterAgent {
  /** The agent's objects (and those of whatever it needs), applied after the namespace. */
  render(ctx: RenderContext): KubeObject[];
  /** Pods of its own beside the agent pod (they count against the node's pods, as filler pods do). */
  readonly extraPods: number;
  /** Flags added to every generator's and bystander's argv. */
  readonly generatorArgs: readonly string[];
  /** Once the agent is ready, before the load pods are applied: what it must know of them (`nodeUid`: the agent's node, from the preflight). */
  beforeLoad?(kc: KubeConfig, ctx: RenderContext, nodeUid: string): Promise<void>;
  /** It serves the reference agent's metrics (in-flight attestations, rejections by key), sampled through the pod proxy. */
  readonly servesMetrics: boolean;
  /** It runs SPIRE's images (spire-server, spire-agent): the local cluster needs them made from the user's build. */
  readonly spireImages: boolean;
  /** It has a server of its own (spire-server), measured on the control plane in a three-node run. */
  readonly server: boolean;
}

const CLUSTER_AGENTS: Record<ClusterAgentKind, ClusterAgent> = {
  reference: {
    render: renderReferenceAgent,
    extraPods: 0,
    generatorArgs: [],
    servesMetrics: true,
    spireImages: false,
    server: false,
  },
  spire: {
    render: renderSpire,
    // spire-server.
    extraPods: 1,
    // A generator is ready only once it fetched an SVID (its registration entry reaches the agent in ~10 s).
    generatorArgs: ['--probe-timeout', '120s'],
    // The generators' registration entry, under the agent's k8s_psat ID on the node.
    beforeLoad: (kc, ctx, nodeUid) => createGeneratorEntry(kc, ctx, nodeUid),
    servesMetrics: false,
    spireImages: true,
    server: true,
  },
};

/** The cluster side of a kind that runs in a cluster. */
export function clusterAgent(kind: ClusterAgentKind): ClusterAgent {
  return CLUSTER_AGENTS[kind];
}

/** The cluster side of a scenario's agent kind; null for a kind that runs on this machine only (external). */
export function clusterAgentOf(kind: string): ClusterAgent | null {
  return Object.hasOwn(CLUSTER_AGENTS, kind) ? CLUSTER_AGENTS[kind as ClusterAgentKind] : null;
}
