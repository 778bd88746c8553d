// The storm pod the kubelet emulator lists in tests and benchmarks: one ReplicaSet pod with one
// container, fixed UID and container ID so a test can look it up in the pod list.
import { buildPodDoc, type PodDoc } from '../../src/sandbox/index.js';

export const STORM_POD_UID = '6f1f2b7e-6a51-4c1e-9a55-2f0c7f3f9e01';
export const STORM_CONTAINER_ID = 'ab'.repeat(32);

export function stormPodDoc(over: { uid?: string; containerID?: string } = {}): PodDoc {
  return buildPodDoc({
    name: 'storm-abcde12345-aaaaa',
    namespace: 'storm',
    uid: over.uid ?? STORM_POD_UID,
    labels: { app: 'storm' },
    owner: { kind: 'ReplicaSet', name: 'storm-abcde12345', uid: '6f1f2b7e-6a51-4c1e-9a55-2f0c7f3f9e02' },
    nodeName: 'attestorm-node',
    serviceAccount: 'storm-worker',
    containers: [
      {
        name: 'storm',
        image: 'registry.local/storm-worker:1.0',
        imageID: 'registry.local/storm-worker@sha256:' + 'cd'.repeat(32),
        containerID: over.containerID ?? STORM_CONTAINER_ID,
      },
    ],
    qosClass: 'BestEffort',
    podIP: '10.244.1.2',
    hostIP: '192.168.10.10',
    startedAt: Date.now() - 60_000,
  });
}
