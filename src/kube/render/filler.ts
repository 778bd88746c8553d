// The other pods on the agent's node, as a cluster has them: the k8s attestor parses the kubelet's
// whole /pods answer on every attestation, and a test cluster's node holds a handful of pods where a
// production node holds ~110 (about 1 MiB of JSON). Filler pods are bound to the agent's node with a
// node selector no node carries, so the kubelet lists them (rejected at admission, phase Failed, as
// a node lists its finished and evicted pods) and runs nothing: no sandbox, no container, no IP.
import { DEFAULT_NODE_PODS } from '../../sandbox/options.js';
import { clusterAgent } from '../cluster-agent.js';
import { MANAGED_BY, MANAGER, ROLE_LABEL, RUN_LABEL, VARIANT_LABEL } from './names.js';
import type { KubeObject, RenderContext } from './objects.js';
/** The label filler pods select and no node has: the kubelet rejects them, and keeps listing them. */
export const FILLER_SELECTOR = { 'attestorm.dev/filler': 'never-scheduled' } as const;

/**
 * How many filler pods a variant gets: its agent.kubelet.fillerPods, or up to a full node (the
 * kubelet's default max-pods, as the local emulator fills to) beside the run's own pods.
 */
export function fillerCount(ctx: RenderContext): number {
  if (ctx.variant.fillerPods !== null) return ctx.variant.fillerPods;
  // In a three-node run the bystanders and spire-server are on other nodes.
  const beside = ctx.nodes ? 0 : clusterAgent(ctx.variant.kind).extraPods + (ctx.load.bystanders?.pods ?? 0);
  const own = 1 + beside + (ctx.memorySampler ? 1 : 0) + ctx.load.pods;
  return Math.max(0, DEFAULT_NODE_PODS - own);
}

const APPS = [
  { app: 'coredns', image: 'registry.k8s.io/coredns/coredns:v1.11.3', sidecar: null },
  { app: 'node-exporter', image: 'quay.io/prometheus/node-exporter:v1.8.2', sidecar: 'quay.io/brancz/kube-rbac-proxy:v0.18.1' },
  { app: 'fluent-bit', image: 'cr.fluentbit.io/fluent/fluent-bit:3.1.9', sidecar: null },
  { app: 'payments-api', image: 'registry.local/payments/api:4.12.0', sidecar: 'ghcr.io/spiffe/spiffe-helper:0.8.0' },
  { app: 'checkout', image: 'registry.local/shop/checkout:2.3.1', sidecar: null },
  { app: 'search-indexer', image: 'registry.local/search/indexer:1.0.9', sidecar: 'registry.local/search/exporter:1.0.9' },
];

function container(name: string, image: string, i: number, envCount: number, port: number, portName: string): Record<string, unknown> {
  return {
    name,
    image,
    imagePullPolicy: 'IfNotPresent',
    args: ['--config=/etc/app/config.yaml', `--listen=:${port}`, '--log-format=json', '--log-level=info'],
    ports: [
      { name: portName, containerPort: port, protocol: 'TCP' },
      { name: `${portName}-metrics`, containerPort: port + 1000, protocol: 'TCP' },
    ],
    env: Array.from({ length: envCount }, (_, k) => ({ name: `APP_SETTING_${String(k).padStart(2, '0')}`, value: `value-${i}-${k}-${'x'.repeat(24)}` })),
    resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '256Mi' } },
    readinessProbe: { httpGet: { path: '/ready', port }, periodSeconds: 10, failureThreshold: 3 },
    livenessProbe: { httpGet: { path: '/healthz', port }, initialDelaySeconds: 15, periodSeconds: 20 },
    volumeMounts: [
      { name: 'config', mountPath: '/etc/app', readOnly: true },
      { name: 'data', mountPath: '/var/lib/app' },
    ],
  };
}

/**
 * `count` filler pods bound to `nodeName`, the same for the same arguments. Each is ~9 KiB as the
 * kubelet serves it, so a node with ~110 pods answers /pods with about 1 MiB, as the local emulator does.
 */
export function renderFillerPods(ctx: RenderContext, nodeName: string, count: number): KubeObject[] {
  return Array.from({ length: count }, (_, i) => {
    const a = APPS[i % APPS.length]!;
    const containers = [container(a.app, a.image, i, a.sidecar ? 8 : 14, 8080 + (i % 7), 'http')];
    if (a.sidecar) containers.push(container('sidecar', a.sidecar, i, 4, 8100, 'proxy'));
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `filler-${String(i).padStart(3, '0')}`,
        namespace: ctx.namespace,
        labels: {
          [MANAGED_BY]: MANAGER,
          [RUN_LABEL]: ctx.runId,
          [VARIANT_LABEL]: ctx.variant.name,
          [ROLE_LABEL]: 'filler',
          app: a.app,
          'app.kubernetes.io/name': a.app,
          'app.kubernetes.io/version': a.image.split(':').pop()!,
        },
        annotations: {
          'kubectl.kubernetes.io/default-container': a.app,
          'prometheus.io/scrape': 'true',
          'prometheus.io/port': '9090',
        },
      },
      spec: {
        nodeName,
        nodeSelector: { ...FILLER_SELECTOR },
        restartPolicy: 'Never',
        automountServiceAccountToken: false,
        terminationGracePeriodSeconds: 0,
        containers,
        volumes: [
          { name: 'config', configMap: { name: `${a.app}-config` } },
          { name: 'data', emptyDir: {} },
        ],
      },
    };
  });
}
