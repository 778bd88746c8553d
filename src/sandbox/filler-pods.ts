// The other pods on the emulated node (DaemonSets, system pods, other teams' apps): deterministic,
// spread over namespaces, some with sidecars and init containers, so /pods has a realistic size.
// A pod-list shape can give every such pod a fixed number of containers, and add pods that have
// ended (finished Jobs, failed pods) and still sit in the list until garbage-collected.
import { buildPodDoc, type PodDoc } from './pod-doc.js';
import { podIpFor, seededHex64, seededSuffix, seededUuid } from './pod-identity.js';

interface FillerApp {
  namespace: string;
  app: string;
  image: string;
  sidecar?: string;
  init?: string;
  qos: 'BestEffort' | 'Burstable' | 'Guaranteed';
}

const APPS: FillerApp[] = [
  { namespace: 'kube-system', app: 'coredns', image: 'registry.k8s.io/coredns/coredns:v1.11.3', qos: 'Burstable' },
  { namespace: 'kube-system', app: 'kube-proxy', image: 'registry.k8s.io/kube-proxy:v1.31.2', qos: 'BestEffort' },
  { namespace: 'kube-system', app: 'metrics-server', image: 'registry.k8s.io/metrics-server/metrics-server:v0.7.2', qos: 'Burstable' },
  {
    namespace: 'monitoring',
    app: 'node-exporter',
    image: 'quay.io/prometheus/node-exporter:v1.8.2',
    sidecar: 'quay.io/brancz/kube-rbac-proxy:v0.18.1',
    qos: 'Burstable',
  },
  {
    namespace: 'monitoring',
    app: 'prometheus',
    image: 'quay.io/prometheus/prometheus:v2.54.1',
    sidecar: 'quay.io/prometheus-operator/prometheus-config-reloader:v0.77.1',
    init: 'quay.io/prometheus-operator/prometheus-config-reloader:v0.77.1',
    qos: 'Burstable',
  },
  { namespace: 'logging', app: 'fluent-bit', image: 'cr.fluentbit.io/fluent/fluent-bit:3.1.9', qos: 'Burstable' },
  { namespace: 'ingress-nginx', app: 'ingress-nginx-controller', image: 'registry.k8s.io/ingress-nginx/controller:v1.11.3', qos: 'Burstable' },
  { namespace: 'cert-manager', app: 'cert-manager', image: 'quay.io/jetstack/cert-manager-controller:v1.16.1', qos: 'Burstable' },
  { namespace: 'spire', app: 'spire-agent', image: 'ghcr.io/spiffe/spire-agent:1.11.0', init: 'cgr.dev/chainguard/wait-for-it:latest', qos: 'Guaranteed' },
  { namespace: 'payments', app: 'payments-api', image: 'registry.local/payments/api:4.12.0', sidecar: 'ghcr.io/spiffe/spiffe-helper:0.8.0', qos: 'Guaranteed' },
  { namespace: 'checkout', app: 'checkout', image: 'registry.local/shop/checkout:2.3.1', qos: 'Burstable' },
  { namespace: 'search', app: 'search-indexer', image: 'registry.local/search/indexer:1.0.9', init: 'registry.local/search/migrate:1.0.9', qos: 'BestEffort' },
  { namespace: 'default', app: 'batch-report', image: 'registry.local/batch/report:2024.10', qos: 'BestEffort' },
];

/** Extra sidecars, in order, for pods given more containers than their app has. */
const SIDECARS = [
  'ghcr.io/spiffe/spiffe-helper:0.8.0',
  'docker.io/envoyproxy/envoy:v1.31.2',
  'quay.io/brancz/kube-rbac-proxy:v0.18.1',
  'cr.fluentbit.io/fluent/fluent-bit:3.1.9',
  'docker.io/otel/opentelemetry-collector-contrib:0.111.0',
];

/** The shape of the other pods; every field absent = today's mix. */
export interface OtherPodsShape {
  /** Containers of each pod: the app's main container, its sidecar, then extra sidecars. */
  containersPerPod?: number | undefined;
}

/** Batch work whose pods end and linger: each terminated pod is one of these Jobs' runs. */
const JOBS: FillerApp[] = [
  { namespace: 'default', app: 'batch-report', image: 'registry.local/batch/report:2024.10', qos: 'BestEffort' },
  { namespace: 'search', app: 'reindex', image: 'registry.local/search/indexer:1.0.9', init: 'registry.local/search/migrate:1.0.9', qos: 'BestEffort' },
  {
    namespace: 'payments',
    app: 'settlement',
    image: 'registry.local/payments/settlement:4.12.0',
    sidecar: 'ghcr.io/spiffe/spiffe-helper:0.8.0',
    qos: 'Burstable',
  },
  { namespace: 'monitoring', app: 'backup', image: 'registry.local/ops/backup:1.4.2', qos: 'Burstable' },
];

/** Filler pods for `nodeName`, the same for the same arguments. `startedAt` anchors their ages. */
export function fillerPods(count: number, nodeName: string, startedAt: number, shape: OtherPodsShape = {}): PodDoc[] {
  return otherPods(APPS, 'filler', count, nodeName, startedAt, shape);
}

/**
 * Pods that ended and are still listed, for `nodeName`, the same for the same arguments: Job runs,
 * one in eight of them failed. Their pod IPs and seeds are apart from the running filler pods'.
 */
export function terminatedPods(count: number, nodeName: string, startedAt: number, shape: OtherPodsShape = {}): PodDoc[] {
  return otherPods(JOBS, 'terminated', count, nodeName, startedAt, shape);
}

function otherPods(
  apps: readonly FillerApp[],
  kind: 'filler' | 'terminated',
  count: number,
  nodeName: string,
  startedAt: number,
  shape: OtherPodsShape,
): PodDoc[] {
  const ended = kind === 'terminated';
  const out: PodDoc[] = [];
  for (let i = 0; i < count; i++) {
    const app = apps[i % apps.length]!;
    // Filler seeds are the ones they always were, so an unshaped list stays byte-for-byte the same.
    const seed = ended ? `${nodeName}/terminated/${app.namespace}/${app.app}/${i}` : `${nodeName}/${app.namespace}/${app.app}/${i}`;
    const hash = seededSuffix(`${app.app}/rs`, 10);
    const rsName = `${app.app}-${hash}`;
    const container = (name: string, image: string, which: string) => ({
      name,
      image,
      imageID:
        i % 2 === 0
          ? `docker-pullable://${image.replace(/:[^:/]+$/, '')}@sha256:${seededHex64(`image:${image}`)}`
          : `${image.replace(/:[^:/]+$/, '')}@sha256:${seededHex64(`image:${image}`)}`,
      containerID: seededHex64(`${seed}/${which}`),
    });
    const containers = [container(app.app.replace(/-controller$/, ''), app.image, 'main')];
    if (app.sidecar) containers.push(container('sidecar', app.sidecar, 'sidecar'));
    if (shape.containersPerPod !== undefined) {
      containers.length = Math.min(containers.length, shape.containersPerPod);
      for (let k = containers.length; k < shape.containersPerPod; k++) {
        containers.push(container(`sidecar-${k}`, SIDECARS[k % SIDECARS.length]!, `sidecar-${k}`));
      }
    }
    // Days old, seconds apart: filler pods are long-running and never wait on visibility.
    const podStart = startedAt - 86_400_000 * (1 + (i % 9)) - i * 1000;
    const owner = ended
      ? { kind: 'Job', name: `${app.app}-${29_000_000 + i}`, uid: seededUuid(`${app.namespace}/job/${app.app}/${i}`) }
      : { kind: 'ReplicaSet', name: rsName, uid: seededUuid(`${app.namespace}/${rsName}`) };
    out.push(
      buildPodDoc({
        name: `${owner.name}-${seededSuffix(seed, 5)}`,
        namespace: app.namespace,
        uid: seededUuid(seed),
        labels: { app: app.app, 'app.kubernetes.io/name': app.app, 'app.kubernetes.io/part-of': app.namespace },
        owner,
        nodeName,
        serviceAccount: app.app,
        containers,
        initContainers: app.init ? [container('init', app.init, 'init')] : [],
        qosClass: app.qos,
        podIP: podIpFor((ended ? 62_000 : 60_000) + i), // above the range sandbox pods cycle through
        hostIP: '192.168.10.11',
        startedAt: podStart,
        extraEnv: app.sidecar ? 14 : 24,
        // Ended minutes to an hour and a half after it started.
        ...(ended ? { ended: { at: podStart + 60_000 * (1 + (i % 90)), exitCode: i % 8 === 7 ? 1 : 0 } } : {}),
      }),
    );
  }
  return out;
}
