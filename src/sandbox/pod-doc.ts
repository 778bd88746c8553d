// Builds v1 Pod objects the way the kubelet's /pods returns them (metadata with managedFields and
// kubelet annotations, full spec, status with container statuses), for sandbox and filler pods alike.

/** One pod in the kubelet's PodList: the v1 Pod JSON object. */
export interface PodDoc {
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [key: string]: unknown;
  };
  spec: Record<string, unknown>;
  status: Record<string, unknown>;
}

/**
 * The kubelet stamps each pod it learned of with this annotation (RFC 3339). The emulator's
 * visibility delay counts from it, so a pod source needs no side channel to say when a pod started.
 */
export const CONFIG_SEEN_ANNOTATION = 'kubernetes.io/config.seen';

export interface PodContainerSpec {
  name: string;
  image: string;
  /** "registry/name@sha256:<hex>" or "docker-pullable://…@sha256:<hex>". */
  imageID: string;
  /** 64 hex, without the runtime prefix. */
  containerID: string;
  env?: Record<string, string>;
}

export interface PodDocInput {
  name: string;
  namespace: string;
  uid: string;
  labels: Record<string, string>;
  owner: { kind: string; name: string; uid: string };
  nodeName: string;
  serviceAccount: string;
  containers: PodContainerSpec[];
  initContainers?: PodContainerSpec[];
  qosClass: 'BestEffort' | 'Burstable' | 'Guaranteed';
  podIP: string;
  hostIP: string;
  /** Start of the pod (ms since the epoch). */
  startedAt: number;
  /** Extra env vars per container, to give pods the bulk real workloads have. */
  extraEnv?: number;
  /**
   * A pod whose containers have all exited (a finished Job, an evicted or failed pod), listed until
   * the pod garbage collector removes it: phase Succeeded (exit code 0) or Failed.
   */
  ended?: { at: number; exitCode: number };
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

function resources(qos: PodDocInput['qosClass']): Record<string, unknown> {
  if (qos === 'BestEffort') return {};
  if (qos === 'Guaranteed') return { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '500m', memory: '256Mi' } };
  return { limits: { memory: '512Mi' }, requests: { cpu: '100m', memory: '128Mi' } };
}

function containerSpec(c: PodContainerSpec, input: PodDocInput): Record<string, unknown> {
  const env: Array<Record<string, unknown>> = [
    { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
    { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } } },
    { name: 'NODE_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'spec.nodeName' } } },
    { name: 'SPIFFE_ENDPOINT_SOCKET', value: 'unix:///run/spire/sockets/agent.sock' },
  ];
  for (const [name, value] of Object.entries(c.env ?? {})) env.push({ name, value });
  for (let i = 0; i < (input.extraEnv ?? 0); i++) {
    env.push({ name: `FEATURE_FLAG_${c.name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_${i}`, value: i % 3 === 0 ? 'true' : `variant-${(i * 7919) % 997}` });
  }
  return {
    name: c.name,
    image: c.image,
    command: ['/usr/local/bin/entrypoint'],
    args: ['--config=/etc/app/config.yaml', `--log-level=${input.namespace === 'kube-system' ? 'warn' : 'info'}`],
    ports: [
      { name: 'http', containerPort: 8080, protocol: 'TCP' },
      { name: 'metrics', containerPort: 9090, protocol: 'TCP' },
    ],
    env,
    resources: resources(input.qosClass),
    volumeMounts: [
      { name: 'config', readOnly: true, mountPath: '/etc/app' },
      { name: 'spire-agent-socket', readOnly: true, mountPath: '/run/spire/sockets' },
      { name: 'kube-api-access', readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' },
    ],
    livenessProbe: {
      httpGet: { path: '/healthz', port: 8080, scheme: 'HTTP' },
      initialDelaySeconds: 10,
      timeoutSeconds: 1,
      periodSeconds: 10,
      successThreshold: 1,
      failureThreshold: 3,
    },
    readinessProbe: { httpGet: { path: '/ready', port: 8080, scheme: 'HTTP' }, timeoutSeconds: 1, periodSeconds: 5, successThreshold: 1, failureThreshold: 3 },
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
    imagePullPolicy: 'IfNotPresent',
    securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
  };
}

function containerStatus(c: PodContainerSpec, startedAt: number, init: boolean, ended?: PodDocInput['ended']): Record<string, unknown> {
  const exited = (exitCode: number, from: number, to: number) => ({
    terminated: {
      exitCode,
      reason: exitCode === 0 ? 'Completed' : 'Error',
      startedAt: iso(from),
      finishedAt: iso(to),
      containerID: `containerd://${c.containerID}`,
    },
  });
  const status: Record<string, unknown> = {
    name: c.name,
    state: init
      ? exited(0, startedAt - 2000, startedAt - 1000)
      : ended
        ? exited(ended.exitCode, startedAt, ended.at)
        : { running: { startedAt: iso(startedAt) } },
    lastState: {},
    ready: !init && !ended,
    restartCount: 0,
    image: c.image,
    imageID: c.imageID,
    containerID: `containerd://${c.containerID}`,
    started: !init && !ended,
  };
  return status;
}

function managedFields(input: PodDocInput): unknown[] {
  // Server-side apply bookkeeping: the bulk of a real pod object, and part of what the agent parses.
  const f = (names: string[]) => Object.fromEntries(names.map((n) => [`f:${n}`, {}]));
  const containersField = Object.fromEntries(
    input.containers.map((c) => [
      `k:{"name":"${c.name}"}`,
      {
        '.': {},
        ...f(['args', 'command', 'image', 'imagePullPolicy', 'name', 'terminationMessagePath', 'terminationMessagePolicy']),
        'f:env': Object.fromEntries(
          ['POD_NAME', 'POD_NAMESPACE', 'NODE_NAME', 'SPIFFE_ENDPOINT_SOCKET'].map((n) => [`k:{"name":"${n}"}`, { '.': {}, 'f:name': {}, 'f:value': {} }]),
        ),
        'f:ports': { '.': {}, 'k:{"containerPort":8080,"protocol":"TCP"}': { '.': {}, ...f(['containerPort', 'name', 'protocol']) } },
        'f:resources': {},
        'f:securityContext': { '.': {}, ...f(['allowPrivilegeEscalation', 'readOnlyRootFilesystem']) },
        'f:volumeMounts': { '.': {}, 'k:{"mountPath":"/etc/app"}': { '.': {}, ...f(['mountPath', 'name', 'readOnly']) } },
      },
    ]),
  );
  return [
    {
      manager: 'kube-controller-manager',
      operation: 'Update',
      apiVersion: 'v1',
      time: iso(input.startedAt - 3000),
      fieldsType: 'FieldsV1',
      fieldsV1: {
        'f:metadata': {
          'f:generateName': {},
          'f:labels': { '.': {}, ...f(Object.keys(input.labels)) },
          'f:ownerReferences': { '.': {}, [`k:{"uid":"${input.owner.uid}"}`]: {} },
        },
        'f:spec': {
          'f:containers': containersField,
          ...f([
            'dnsPolicy',
            'enableServiceLinks',
            'restartPolicy',
            'schedulerName',
            'securityContext',
            'serviceAccount',
            'serviceAccountName',
            'terminationGracePeriodSeconds',
          ]),
          'f:volumes': { '.': {}, 'k:{"name":"config"}': { '.': {}, 'f:configMap': { '.': {}, ...f(['defaultMode', 'name']) }, 'f:name': {} } },
        },
      },
    },
    {
      manager: 'kubelet',
      operation: 'Update',
      apiVersion: 'v1',
      time: iso(input.startedAt + 1000),
      fieldsType: 'FieldsV1',
      fieldsV1: {
        'f:status': {
          'f:conditions': Object.fromEntries(
            ['ContainersReady', 'Initialized', 'PodReadyToStartContainers', 'Ready'].map((t) => [
              `k:{"type":"${t}"}`,
              { '.': {}, ...f(['lastProbeTime', 'lastTransitionTime', 'status', 'type']) },
            ]),
          ),
          ...f(['containerStatuses', 'hostIP', 'hostIPs', 'phase', 'podIP', 'podIPs', 'startTime']),
        },
      },
      subresource: 'status',
    },
  ];
}

/** A running pod as the kubelet reports it. */
export function buildPodDoc(input: PodDocInput): PodDoc {
  const created = iso(input.startedAt);
  const init = input.initContainers ?? [];
  return {
    metadata: {
      name: input.name,
      generateName: `${input.owner.name}-`,
      namespace: input.namespace,
      uid: input.uid,
      resourceVersion: String(100000 + (parseInt(input.uid.slice(0, 6), 16) % 900000)),
      creationTimestamp: created,
      labels: { ...input.labels, 'pod-template-hash': input.owner.name.slice(input.owner.name.lastIndexOf('-') + 1) },
      annotations: {
        [CONFIG_SEEN_ANNOTATION]: new Date(input.startedAt).toISOString(),
        'kubernetes.io/config.source': 'api',
        'prometheus.io/scrape': 'true',
        'prometheus.io/port': '9090',
      },
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: input.owner.kind, name: input.owner.name, uid: input.owner.uid, controller: true, blockOwnerDeletion: true },
      ],
      managedFields: managedFields(input),
    },
    spec: {
      volumes: [
        { name: 'config', configMap: { name: `${input.owner.name.replace(/-[^-]+$/, '')}-config`, defaultMode: 420 } },
        { name: 'spire-agent-socket', hostPath: { path: '/run/spire/sockets', type: 'Directory' } },
        {
          name: 'kube-api-access',
          projected: {
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
              { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
              { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
            ],
            defaultMode: 420,
          },
        },
      ],
      ...(init.length ? { initContainers: init.map((c) => containerSpec(c, input)) } : {}),
      containers: input.containers.map((c) => containerSpec(c, input)),
      // A pod that can end for good is a Job's (a Deployment's would be restarted).
      restartPolicy: input.ended ? 'Never' : 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: input.serviceAccount,
      serviceAccount: input.serviceAccount,
      nodeName: input.nodeName,
      securityContext: {},
      schedulerName: 'default-scheduler',
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ],
      priority: 0,
      enableServiceLinks: true,
      preemptionPolicy: 'PreemptLowerPriority',
    },
    status: {
      phase: input.ended ? (input.ended.exitCode === 0 ? 'Succeeded' : 'Failed') : 'Running',
      conditions: ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) =>
        input.ended && type !== 'Initialized' && type !== 'PodScheduled'
          ? {
              type,
              status: 'False',
              lastProbeTime: null,
              lastTransitionTime: iso(input.ended.at),
              ...(type === 'Ready' || type === 'ContainersReady' ? { reason: 'PodCompleted' } : {}),
            }
          : { type, status: 'True', lastProbeTime: null, lastTransitionTime: created },
      ),
      hostIP: input.hostIP,
      hostIPs: [{ ip: input.hostIP }],
      podIP: input.podIP,
      podIPs: [{ ip: input.podIP }],
      startTime: created,
      ...(init.length ? { initContainerStatuses: init.map((c) => containerStatus(c, input.startedAt, true)) } : {}),
      containerStatuses: input.containers.map((c) => containerStatus(c, input.startedAt, false, input.ended)),
      qosClass: input.qosClass,
    },
  };
}

/** The start time the kubelet stamped on a pod, or null (then it is visible at once). */
export function podSeenAt(doc: PodDoc): number | null {
  const seen = doc.metadata.annotations?.[CONFIG_SEEN_ANNOTATION];
  if (!seen) return null;
  const ms = Date.parse(seen);
  return Number.isFinite(ms) ? ms : null;
}
