// A three-node scenario's nodes, from the cluster's node list, before anything is applied: a
// cluster that cannot hold the topology (fewer than 3 nodes, no control plane, fewer than two
// schedulable workers) is a scenario error naming the nodes it has.
import { CoreV1Api, type KubeConfig, type V1Node } from '@kubernetes/client-node';
import { ConfigError, RunError } from '../../errors.js';
import { nodeRolesOf, type NodeFacts, type NodeRoles } from '../../kube/index.js';
import type { Scenario } from '../../scenario/index.js';

export function nodeFacts(n: V1Node): NodeFacts {
  return {
    name: n.metadata?.name ?? '',
    labels: n.metadata?.labels ?? {},
    blockingTaints: (n.spec?.taints ?? []).filter((t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute').map((t) => t.key),
    ready: (n.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
  };
}

/** The roles of the cluster's nodes for a three-node scenario; null for a single-node one. */
export async function scenarioNodeRoles(kc: KubeConfig, s: Scenario, cluster: string): Promise<NodeRoles | null> {
  if (s.cluster.topology !== 'three-node') return null;
  let nodes: V1Node[];
  try {
    nodes = (await kc.makeApiClient(CoreV1Api).listNode()).items;
  } catch (err) {
    throw new RunError(`preflight (nodes): cannot list the nodes of ${cluster}: ${(err as Error).message}`, { cause: err });
  }
  const roles = nodeRolesOf(nodes.map(nodeFacts));
  if (typeof roles === 'string')
    throw new ConfigError(
      `scenario ${s.name}: cluster.topology three-node ${roles} in ${cluster}; make one with \`attestorm kind up --nodes 3\`, or run a single-node scenario there`,
    );
  return roles;
}
