// A three-node scenario's nodes, from the cluster's node list, before anything is applied: a
// cluster that cannot hold the topology (fewer than 3 nodes, no control plane, fewer than two
// schedulable workers) is a scenario error naming the nodes it has.
import { CoreV1Api, type KubeConfig, type V1Node } from '@kubernetes/client-node';
import { ConfigError, RunError } from '../../errors.js';
import { nodeRolesOf, singleNodeOf, type NodeFacts, type NodeRoles } from '../../kube/index.js';
import type { Scenario } from '../../scenario/index.js';

export function nodeFacts(n: V1Node): NodeFacts {
  return {
    name: n.metadata?.name ?? '',
    labels: n.metadata?.labels ?? {},
    blockingTaints: (n.spec?.taints ?? []).filter((t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute').map((t) => t.key),
    ready: (n.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
  };
}

async function listNodes(kc: KubeConfig, cluster: string): Promise<V1Node[]> {
  try {
    return (await kc.makeApiClient(CoreV1Api).listNode()).items;
  } catch (err) {
    throw new RunError(`preflight (nodes): cannot list the nodes of ${cluster}: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * Where a single-node scenario runs in a cluster of several nodes: every pod of the run (agent,
 * storm, bystanders, fillers, sampler) on one node, so the agent measured is the one the storm
 * calls. null for a one-node cluster and for a three-node scenario (scenarioNodeRoles places that).
 */
export async function scenarioSingleNode(kc: KubeConfig, s: Scenario, cluster: string): Promise<string | null> {
  if (s.cluster.topology === 'three-node') return null;
  return singleNodeOf((await listNodes(kc, cluster)).map(nodeFacts));
}

/** The roles of the cluster's nodes for a three-node scenario; null for a single-node one. */
export async function scenarioNodeRoles(kc: KubeConfig, s: Scenario, cluster: string): Promise<NodeRoles | null> {
  if (s.cluster.topology !== 'three-node') return null;
  const nodes = await listNodes(kc, cluster);
  const roles = nodeRolesOf(nodes.map(nodeFacts));
  if (typeof roles === 'string')
    throw new ConfigError(
      `scenario ${s.name}: cluster.topology three-node ${roles} in ${cluster}; make one with \`attestorm kind up --nodes 3\`, or run a single-node scenario there`,
    );
  return roles;
}
