// Where the kubelet would put a pod's container cgroup, per cgroup driver and QoS class, below the
// run's own root (attestorm/<runId>) instead of the node's root.

export type CgroupDriver = 'cgroupfs' | 'systemd';
export type QosClass = 'besteffort' | 'burstable' | 'guaranteed';

/** The kubepods subtree of a run (what stopPods removes), relative to the run root. */
export function kubepodsDir(driver: CgroupDriver): string {
  return driver === 'systemd' ? 'kubepods.slice' : 'kubepods';
}

/** Pod-level cgroup, relative to the run root. Guaranteed pods sit directly under kubepods. */
export function podCgroupRel(driver: CgroupDriver, qos: QosClass, podUid: string): string {
  if (driver === 'cgroupfs') return qos === 'guaranteed' ? `kubepods/pod${podUid}` : `kubepods/${qos}/pod${podUid}`;
  const uid = podUid.replaceAll('-', '_');
  return qos === 'guaranteed' ? `kubepods.slice/kubepods-pod${uid}.slice` : `kubepods.slice/kubepods-${qos}.slice/kubepods-${qos}-pod${uid}.slice`;
}

/** Container cgroup, relative to the run root: `<pod>/<cid>` or `<pod>/cri-containerd-<cid>.scope`. */
export function containerCgroupRel(driver: CgroupDriver, qos: QosClass, podUid: string, containerId: string): string {
  const leaf = driver === 'systemd' ? `cri-containerd-${containerId}.scope` : containerId;
  return `${podCgroupRel(driver, qos, podUid)}/${leaf}`;
}
