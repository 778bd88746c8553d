// What a new pod of the sandbox is: its workload (the storm's ReplicaSet or the bystanders'), its
// Kubernetes identity, its OS ids, and the PodList entry the kubelet emulator lists for it.
import { BYSTANDER_UID_BASE, PER_POD_UID_BASE, type ResolvedSandboxOptions } from './options.js';
import { buildPodDoc, type PodDoc } from './pod-doc.js';
import { containerNameFor, imageIdFor, newPodUid, podIpFor, randomContainerId, randomSuffix, seededUuid } from './pod-identity.js';
import type { PodGroup, SandboxPod } from './sandbox-pod.js';

// Bystanders look like any other workload of the node: their own app label, service account and image.
const BYSTANDER_LABELS: Record<string, string> = { app: 'bystander' };
const BYSTANDER_SERVICE_ACCOUNT = 'bystander';
const BYSTANDER_IMAGE = 'registry.local/bystander:1.0';

const QOS_NAMES = { besteffort: 'BestEffort', burstable: 'Burstable', guaranteed: 'Guaranteed' } as const;

export class PodFactory {
  readonly #opts: ResolvedSandboxOptions;
  readonly #rsName: string;
  readonly #rsUid: string;
  readonly #bystanderRsName: string;
  readonly #bystanderRsUid: string;
  #serial = 0;

  constructor(opts: ResolvedSandboxOptions) {
    this.#opts = opts;
    this.#rsName = `${containerNameFor(opts.labels)}-${randomSuffix(10)}`;
    this.#rsUid = seededUuid(`${opts.runId}/${this.#rsName}`);
    this.#bystanderRsName = `${containerNameFor(BYSTANDER_LABELS)}-${randomSuffix(10)}`;
    this.#bystanderRsUid = seededUuid(`${opts.runId}/${this.#bystanderRsName}`);
  }

  /** The pod for slot index (an extra pod when `extra`), with new UIDs; no cgroup yet. */
  newPod(index: number, extra: boolean): SandboxPod {
    const o = this.#opts;
    const uid = newPodUid();
    const containerId = randomContainerId();
    const group: PodGroup = index < o.pods || extra ? 'storm' : 'bystanders';
    const labels = group === 'storm' ? { ...o.labels } : { ...BYSTANDER_LABELS };
    const image = group === 'storm' ? o.image : BYSTANDER_IMAGE;
    const { uid: osUid, gid: osGid } = this.#osIds(group, index);
    return {
      index,
      group,
      uid,
      name: `${group === 'storm' ? this.#rsName : this.#bystanderRsName}-${randomSuffix(5)}`,
      namespace: o.namespace,
      serviceAccount: group === 'storm' ? o.serviceAccount : BYSTANDER_SERVICE_ACCOUNT,
      labels,
      containerName: containerNameFor(labels),
      containerId,
      image,
      imageId: imageIdFor(image),
      osUid,
      osGid,
      cgroup: null,
      startedAt: Date.now(),
      ...(extra ? { extra: true } : {}),
    };
  }

  /** The pod as the kubelet lists it; each document gets the next pod IP. */
  docFor(pod: SandboxPod): PodDoc {
    const storm = pod.group === 'storm';
    return buildPodDoc({
      name: pod.name,
      namespace: pod.namespace,
      uid: pod.uid,
      labels: pod.labels,
      owner: storm
        ? { kind: 'ReplicaSet', name: this.#rsName, uid: this.#rsUid }
        : { kind: 'ReplicaSet', name: this.#bystanderRsName, uid: this.#bystanderRsUid },
      nodeName: this.#opts.kubelet.nodeName,
      serviceAccount: pod.serviceAccount,
      containers: [{ name: pod.containerName, image: pod.image, imageID: pod.imageId, containerID: pod.containerId }],
      qosClass: QOS_NAMES[this.#opts.qosClass],
      podIP: podIpFor(this.#serial++ % 60_000),
      hostIP: '192.168.10.10',
      startedAt: pod.startedAt,
      extraEnv: 24,
    });
  }

  /**
   * Storm pods: the process's ids, or 20000+i per pod. Bystanders: the storm's ids (uid "same", pod
   * 0's under per-pod, so an os-uid limiter key puts them in a storm pod's bucket), or 30000+j.
   */
  #osIds(group: PodGroup, index: number): { uid: number; gid: number } {
    const o = this.#opts;
    if (group === 'bystanders' && o.bystanders?.uid === 'own') {
      const id = BYSTANDER_UID_BASE + index - o.pods;
      return { uid: id, gid: id };
    }
    const slot = group === 'storm' ? index : 0;
    if (o.uidMode === 'per-pod') return { uid: PER_POD_UID_BASE + slot, gid: PER_POD_UID_BASE + slot };
    return { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
  }
}
