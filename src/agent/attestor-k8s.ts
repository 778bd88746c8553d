// The k8s attestor: the caller's pod and container from its cgroup, then the pod looked up in the
// kubelet's pod list, turned into k8s:* selectors. A caller outside any container gets none.
import { AttestationError, type AttestorDeps } from './attestation-error.js';
import { parseCgroup } from './cgroup-path.js';
import type { AgentConfig } from './config.js';
import { createKubeletClient, KubeletError, type KubeletClient, type KubeContainerStatus, type PodContainer, type PodListIndex } from './kubelet-client.js';
import { readCgroupText } from './procfs.js';
import type { Attestor, CallerCreds, Selector } from './types.js';

/** Image and image ID of each status, deduplicated (both are selectable: tag before pull, digest after). */
function images(statuses: readonly KubeContainerStatus[] | undefined): string[] {
  const set = new Set<string>();
  for (const s of statuses ?? []) {
    if (s.image) set.add(s.image);
    if (s.imageID) set.add(s.imageID);
  }
  return [...set];
}

/** The k8s:* selector values of a container in its pod, in a stable order. */
export function k8sSelectorValues(found: PodContainer, nodeName?: string): string[] {
  const { pod, status } = found;
  const md = pod.metadata;
  const out: string[] = [
    `ns:${md.namespace}`,
    `sa:${pod.spec?.serviceAccountName ?? ''}`,
    `node-name:${nodeName ?? pod.spec?.nodeName ?? ''}`,
    `pod-uid:${md.uid}`,
    `pod-name:${md.name}`,
  ];
  for (const image of images(pod.status?.containerStatuses)) out.push(`pod-image:${image}`);
  out.push(`pod-image-count:${pod.status?.containerStatuses?.length ?? 0}`);
  for (const image of images(pod.status?.initContainerStatuses)) out.push(`pod-init-image:${image}`);
  out.push(`pod-init-image-count:${pod.status?.initContainerStatuses?.length ?? 0}`);
  for (const [k, v] of Object.entries(md.labels ?? {})) out.push(`pod-label:${k}:${v}`);
  for (const o of md.ownerReferences ?? []) {
    out.push(`pod-owner:${o.kind}:${o.name}`);
    out.push(`pod-owner-uid:${o.kind}:${o.uid}`);
  }
  out.push(`container-name:${status.name}`);
  for (const image of images([status])) out.push(`container-image:${image}`);
  return out;
}

/**
 * Finds the container in a list. With a pod UID the container must belong to that pod; without
 * one (cri-o, cgroup namespaces) the container ID alone decides. A listed pod whose container
 * status is not there yet counts as not found, so the caller polls.
 */
export function findContainer(list: PodListIndex, podUID: string | null, containerID: string): PodContainer | undefined {
  const hit = list.byContainerId.get(containerID);
  if (hit === undefined) return undefined;
  if (podUID !== null && hit.pod.metadata.uid !== podUID) return undefined;
  return hit;
}

export interface K8sAttestorOptions {
  procRoot: string;
  kubelet: KubeletClient;
  nodeName?: string;
}

export function createK8sAttestorWith(opts: K8sAttestorOptions): Attestor {
  return {
    name: 'k8s',
    async attest(caller: CallerCreds): Promise<Selector[]> {
      let text: string;
      try {
        text = await readCgroupText(opts.procRoot, caller.pid);
      } catch (err) {
        throw new AttestationError('k8s', 'process-gone', `cannot read cgroups of pid ${caller.pid}: ${(err as Error).message}`, { cause: err });
      }
      const { podUID, containerID } = parseCgroup(text);
      if (containerID === null) return []; // not in a pod: other attestors speak for it
      const what = podUID ? `container ${containerID} of pod ${podUID}` : `container ${containerID}`;
      let found: PodContainer;
      try {
        found = await opts.kubelet.waitFor((list) => findContainer(list, podUID, containerID), what);
      } catch (err) {
        if (err instanceof KubeletError) {
          const reason = err.reason === 'not-found' ? 'pod-not-found' : 'kubelet-unavailable';
          throw new AttestationError('k8s', reason, err.message, { cause: err });
        }
        throw err;
      }
      return k8sSelectorValues(found, opts.nodeName).map((value) => ({ type: 'k8s', value }));
    },
    close() {
      opts.kubelet.close();
    },
  };
}

export function createK8sAttestor(cfg: AgentConfig, deps: AttestorDeps): Attestor {
  const k = cfg.k8s;
  const kubelet = createKubeletClient({
    url: k.kubeletUrl,
    tokenFile: k.tokenFile,
    caFile: k.caFile,
    skipVerify: k.skipVerify,
    timeoutMs: k.timeout,
    pollIntervalMs: k.pollInterval,
    maxPollAttempts: k.maxPollAttempts,
    shareFetches: k.shareFetches,
    listWorkingSetBytes: cfg.model.podListWorkingSet,
    onFetch: deps.onKubeletFetch,
  });
  return createK8sAttestorWith({ procRoot: cfg.procRoot, kubelet, nodeName: k.nodeName });
}
