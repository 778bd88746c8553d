// The memory-sampler pod, for clusters whose nodes this host cannot read (kind's node is a
// container here, read from the host directly): the project's image running `attestorm kind
// memory-sampler`, on the agent's node (pod affinity to the agent pod), with the node's
// /sys/fs/cgroup as a read-only hostPath. It needs no privileges inside: cgroup files are
// world-readable; the hostPath makes it a pod for the "privileged" Pod Security level.
import { HOST_CGROUP_MOUNT, MEMORY_SAMPLER_POD, MEMORY_SAMPLER_PORT, meta, PROJECT_UID, type KubeObject, type RenderContext } from './objects.js';
import { baseLabels, projectContainer } from './base.js';
import { samplerPlacement } from './topology.js';

export function memorySamplerArgv(): string[] {
  return ['kind', 'memory-sampler', '--cgroup-root', HOST_CGROUP_MOUNT, '--port', String(MEMORY_SAMPLER_PORT)];
}

export function renderMemorySampler(ctx: RenderContext): KubeObject[] {
  return [
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: meta(ctx, MEMORY_SAMPLER_POD, baseLabels(ctx, { 'attestorm.dev/role': 'memory-sampler' })),
      spec: {
        restartPolicy: 'Always',
        terminationGracePeriodSeconds: 2,
        automountServiceAccountToken: false,
        // On the agent's node, wherever the scheduler put it (the storm's node when there are two agents).
        ...samplerPlacement(ctx),
        affinity: {
          podAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [
              { labelSelector: { matchLabels: { 'attestorm.dev/role': 'agent' } }, topologyKey: 'kubernetes.io/hostname' },
            ],
          },
        },
        securityContext: { runAsUser: PROJECT_UID, runAsGroup: PROJECT_UID, runAsNonRoot: true },
        containers: [
          {
            ...projectContainer(ctx, { name: 'sampler', args: memorySamplerArgv(), portName: 'readings', port: MEMORY_SAMPLER_PORT }),
            // Its own memory must not be the agent's: small, and in a cgroup of its own.
            resources: { requests: { memory: '64Mi', cpu: '50m' }, limits: { memory: '128Mi' } },
            securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true },
            volumeMounts: [{ name: 'host-cgroup', mountPath: HOST_CGROUP_MOUNT, readOnly: true }],
          },
        ],
        volumes: [{ name: 'host-cgroup', hostPath: { path: '/sys/fs/cgroup', type: 'Directory' } }],
      },
    },
  ];
}
