// One pod of the sandbox as the rest of the harness sees it: its Kubernetes identity, its OS ids
// and its container's cgroup.
import type { Cgroup } from '../cgroup/index.js';

/** Which set a pod belongs to: the storm's pods, or the well-behaved bystanders beside them. */
export type PodGroup = 'storm' | 'bystanders';

export interface SandboxPod {
  /**
   * Slot index: storm pods 0..pods-1, bystander pods pods..pods+bystanders-1, extra storm pods
   * (addPods) from pods+bystanders on, each a slot of its own.
   */
  index: number;
  group: PodGroup;
  /** Started by addPods (a burst's wave): never replaced, never churned, ended by endPods. */
  extra?: boolean;
  /** True when the pod's container has a CPU cgroup of its own (see LoadPod.cpuGroup). */
  cpuGroup?: boolean;
  uid: string;
  name: string;
  namespace: string;
  serviceAccount: string;
  labels: Record<string, string>;
  containerName: string;
  /** 64 hex, as in the container's cgroup and in /pods' containerID (`containerd://<id>`). */
  containerId: string;
  image: string;
  imageId: string;
  osUid: number;
  osGid: number;
  /** The container's cgroup (…/pod<uid>/<containerId>), null in uid-only fidelity. */
  cgroup: Cgroup | null;
  /** Date.now() when the pod started. */
  startedAt: number;
}
