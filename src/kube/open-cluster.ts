// What `attestorm run --cluster/--context` needs before its first variant: the kubeconfig with the
// checked context, the cluster name SPIRE's k8s_psat should use, and (kind only) the node
// container's cgroup on this host for the 100 ms memory series.
import type { KubeConfig } from '@kubernetes/client-node';
import { loadKubeConfig, parseClusterTarget, type ClusterTarget } from './cluster-target.js';
import type { NodeCgroupRoot } from './kind-cgroup.js';
import { kindNodeCgroup } from './kind-cli.js';

export interface OpenCluster {
  kc: KubeConfig;
  target: ClusterTarget;
  clusterName: string;
  /** null on clusters that are not kind on this host: a memory-sampler pod reads the agent's cgroup instead (stated in `note`). */
  nodeCgroup: NodeCgroupRoot | null;
  note: string | null;
}

export async function openCluster(opts: { cluster?: string; context?: string; kubeconfig?: string }): Promise<OpenCluster> {
  const target = parseClusterTarget(opts);
  const kc = loadKubeConfig(target, opts.kubeconfig);
  if (!target.kindName) {
    return { kc, target, clusterName: target.context, nodeCgroup: null, note: `context ${target.context} is not a kind cluster on this host: the agent's memory is read by a memory-sampler pod on its node (hostPath /sys/fs/cgroup)` };
  }
  return { kc, target, clusterName: target.kindName, nodeCgroup: await kindNodeCgroup(target.kindName), note: null };
}
