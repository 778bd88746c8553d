// What `attestorm run --cluster/--context` needs before its first variant: the kubeconfig with the
// checked context, the cluster name SPIRE's k8s_psat should use, and (kind only) the node
// container's cgroup on this host for the 100 ms memory series.
import type { KubeConfig } from '@kubernetes/client-node';
import { loadKubeConfig, parseClusterTarget, type ClusterTarget } from './cluster-target.js';
import type { NodeCgroupRoot } from '../../kind/index.js';
import { kindNode, kindNodeContainer } from '../../kind/index.js';
import type { NodeContainerProbe } from './agent-node.js';

export interface OpenCluster {
  kc: KubeConfig;
  target: ClusterTarget;
  clusterName: string;
  /** null on clusters that are not kind on this host: a memory-sampler pod reads the agent's cgroup instead (stated in `note`). */
  nodeCgroup: NodeCgroupRoot | null;
  /** kind only: the state of a node's container in its engine (gone, stopped, restarted); null on other clusters. */
  nodeContainer?: NodeContainerProbe | null;
  /** kind only: the node container's image (what the cluster's nodes were made from). */
  nodeImage?: string | null;
  note: string | null;
  /** Set when the API server listens on loopback (not kind): the runner is on the node, and host-network pods reach it there. */
  hostApiServer?: { host: string; port: number } | null;
}

/** The kubeconfig's server when it is a loopback address: host-network pods on that node reach it at the same address. */
export function loopbackApiServer(server: string | undefined): { host: string; port: number } | null {
  if (!server) return null;
  let u: URL;
  try {
    u = new URL(server);
  } catch {
    return null;
  }
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (!['127.0.0.1', 'localhost', '::1'].includes(host)) return null;
  return { host: host === 'localhost' ? '127.0.0.1' : host, port: Number(u.port || (u.protocol === 'https:' ? 443 : 80)) };
}

export async function openCluster(opts: { cluster?: string; context?: string; kubeconfig?: string }): Promise<OpenCluster> {
  const target = parseClusterTarget(opts);
  const kc = loadKubeConfig(target, opts.kubeconfig);
  if (!target.kindName) {
    return {
      kc,
      target,
      clusterName: target.context,
      nodeCgroup: null,
      nodeContainer: null,
      hostApiServer: loopbackApiServer(kc.getCurrentCluster()?.server),
      note: `context ${target.context} is not a kind cluster on this host: the agent's memory is read by a memory-sampler pod on its node (hostPath /sys/fs/cgroup)`,
    };
  }
  // kind's loopback address is the Docker host's port mapping, not the node's own loopback.
  const node = await kindNode(target.kindName);
  return {
    kc,
    target,
    clusterName: target.kindName,
    nodeCgroup: node.cgroup,
    nodeContainer: (name) => kindNodeContainer(name),
    nodeImage: node.image,
    note: null,
    hostApiServer: null,
  };
}
