// Which node holds what in a three-node run (scenario.cluster.topology): the agent under test and
// the storm's pods on the storm node, a second agent of the same DaemonSet and the bystanders on the
// quiet node, spire-server on the control plane. Node names come from the cluster's node list
// (or kind's names for `kind render`); the renderers ask here instead of naming a node themselves.
import type { NodeRoles, RenderContext } from './objects.js';

export type { NodeRoles };

/** The taint kubeadm puts on a control plane; spire-server tolerates it. */
export const CONTROL_PLANE_TAINT = 'node-role.kubernetes.io/control-plane';

/** The nodes of a kind cluster of one control plane and two workers, as kind names them. */
export function kindNodeRoles(clusterName: string): NodeRoles {
  return { storm: `${clusterName}-worker`, quiet: `${clusterName}-worker2`, server: `${clusterName}-control-plane` };
}

export interface NodeFacts {
  name: string;
  labels: Record<string, string>;
  /** Taints with effect NoSchedule or NoExecute a pod without a toleration cannot pass. */
  blockingTaints: string[];
  ready: boolean;
}

/**
 * The roles from a cluster's nodes: the control plane (its role label) serves, the first two
 * schedulable workers by name are the storm's and the quiet one. A problem in words when the
 * cluster cannot hold the topology.
 */
export function nodeRolesOf(nodes: NodeFacts[]): NodeRoles | string {
  const listed = nodes.map((n) => n.name).join(', ') || 'none';
  if (nodes.length < 3) return `needs 3 nodes (a control plane and two workers), the cluster has ${nodes.length} (${listed})`;
  const isControlPlane = (n: NodeFacts) => CONTROL_PLANE_TAINT in n.labels;
  const server = nodes.find(isControlPlane);
  if (!server) return `needs a control-plane node (label ${CONTROL_PLANE_TAINT}) for spire-server, none of ${listed} has one`;
  const workers = nodes
    .filter((n) => !isControlPlane(n) && n.ready && n.blockingTaints.length === 0)
    .map((n) => n.name)
    .sort();
  if (workers.length < 2)
    return `needs two ready, untainted workers (the storm's node and the quiet node), the cluster has ${workers.length} (${listed}; ${server.name} is the control plane)`;
  return { storm: workers[0]!, quiet: workers[1]!, server: server.name };
}

/**
 * The node a single-node scenario runs on in a cluster of several: the first ready, untainted
 * worker by name, else the first ready, untainted node; null where there is one node (or none
 * fits), which leaves the pods to the scheduler.
 */
export function singleNodeOf(nodes: NodeFacts[]): string | null {
  if (nodes.length < 2) return null;
  const usable = nodes.filter((n) => n.ready && n.blockingTaints.length === 0);
  const byName = (list: NodeFacts[]) => list.map((n) => n.name).sort()[0] ?? null;
  return byName(usable.filter((n) => !(CONTROL_PLANE_TAINT in n.labels))) ?? byName(usable);
}

function onNode(node: string): Record<string, unknown> {
  return { nodeSelector: { 'kubernetes.io/hostname': node } };
}

/** The agent DaemonSet's pods: one on each worker of a three-node run, else on the run's node. */
export function agentPlacement(ctx: RenderContext): Record<string, unknown> {
  if (ctx.nodes) {
    const values = [ctx.nodes.storm, ctx.nodes.quiet];
    return {
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values }] }],
          },
        },
      },
    };
  }
  return ctx.nodeName ? onNode(ctx.nodeName) : {};
}

/** Storm pods beside the agent under test; bystanders on the quiet node in a three-node run. */
export function loadPlacement(ctx: RenderContext, role: 'generator' | 'bystander'): Record<string, unknown> {
  if (ctx.nodes) return onNode(role === 'generator' ? ctx.nodes.storm : ctx.nodes.quiet);
  return ctx.nodeName ? onNode(ctx.nodeName) : {};
}

/** spire-server on the control plane in a three-node run, tolerating its taint; else wherever the scheduler puts it. */
export function serverPlacement(ctx: RenderContext): Record<string, unknown> {
  if (!ctx.nodes) return {};
  return { ...onNode(ctx.nodes.server), tolerations: [{ key: CONTROL_PLANE_TAINT, operator: 'Exists', effect: 'NoSchedule' }] };
}

/** The memory-sampler pod reads the agent under test: the storm node's in a three-node run, else the run's node. */
export function samplerPlacement(ctx: RenderContext): Record<string, unknown> {
  if (ctx.nodes) return onNode(ctx.nodes.storm);
  return ctx.nodeName ? onNode(ctx.nodeName) : {};
}
