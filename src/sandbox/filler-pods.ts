// The other pods on the emulated node (DaemonSets, system pods, other teams' apps): deterministic,
// spread over namespaces, some with sidecars and init containers, so /pods has a realistic size.
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
  { namespace: 'monitoring', app: 'node-exporter', image: 'quay.io/prometheus/node-exporter:v1.8.2', sidecar: 'quay.io/brancz/kube-rbac-proxy:v0.18.1', qos: 'Burstable' },
  { namespace: 'monitoring', app: 'prometheus', image: 'quay.io/prometheus/prometheus:v2.54.1', sidecar: 'quay.io/prometheus-operator/prometheus-config-reloader:v0.77.1', init: 'quay.io/prometheus-operator/prometheus-config-reloader:v0.77.1', qos: 'Burstable' },
  { namespace: 'logging', app: 'fluent-bit', image: 'cr.fluentbit.io/fluent/fluent-bit:3.1.9', qos: 'Burstable' },
  { namespace: 'ingress-nginx', app: 'ingress-nginx-controller', image: 'registry.k8s.io/ingress-nginx/controller:v1.11.3', qos: 'Burstable' },
  { namespace: 'cert-manager', app: 'cert-manager', image: 'quay.io/jetstack/cert-manager-controller:v1.16.1', qos: 'Burstable' },
  { namespace: 'spire', app: 'spire-agent', image: 'ghcr.io/spiffe/spire-agent:1.11.0', init: 'cgr.dev/chainguard/wait-for-it:latest', qos: 'Guaranteed' },
  { namespace: 'payments', app: 'payments-api', image: 'registry.local/payments/api:4.12.0', sidecar: 'ghcr.io/spiffe/spiffe-helper:0.8.0', qos: 'Guaranteed' },
  { namespace: 'checkout', app: 'checkout', image: 'registry.local/shop/checkout:2.3.1', qos: 'Burstable' },
  { namespace: 'search', app: 'search-indexer', image: 'registry.local/search/indexer:1.0.9', init: 'registry.local/search/migrate:1.0.9', qos: 'BestEffort' },
  { namespace: 'default', app: 'batch-report', image: 'registry.local/batch/report:2024.10', qos: 'BestEffort' },
];

/** Filler pods for `nodeName`, the same for the same arguments. `startedAt` anchors their ages. */
export function fillerPods(count: number, nodeName: string, startedAt: number): PodDoc[] {
  const out: PodDoc[] = [];
  for (let i = 0; i < count; i++) {
    const app = APPS[i % APPS.length]!;
    const seed = `${nodeName}/${app.namespace}/${app.app}/${i}`;
    const hash = seededSuffix(`${app.app}/rs`, 10);
    const rsName = `${app.app}-${hash}`;
    const container = (name: string, image: string, which: string) => ({
      name,
      image,
      imageID: i % 2 === 0 ? `docker-pullable://${image.replace(/:[^:/]+$/, '')}@sha256:${seededHex64(`image:${image}`)}` : `${image.replace(/:[^:/]+$/, '')}@sha256:${seededHex64(`image:${image}`)}`,
      containerID: seededHex64(`${seed}/${which}`),
    });
    const containers = [container(app.app.replace(/-controller$/, ''), app.image, 'main')];
    if (app.sidecar) containers.push(container('sidecar', app.sidecar, 'sidecar'));
    out.push(
      buildPodDoc({
        name: `${rsName}-${seededSuffix(seed, 5)}`,
        namespace: app.namespace,
        uid: seededUuid(seed),
        labels: { app: app.app, 'app.kubernetes.io/name': app.app, 'app.kubernetes.io/part-of': app.namespace },
        owner: { kind: 'ReplicaSet', name: rsName, uid: seededUuid(`${app.namespace}/${rsName}`) },
        nodeName,
        serviceAccount: app.app,
        containers,
        initContainers: app.init ? [container('init', app.init, 'init')] : [],
        qosClass: app.qos,
        podIP: podIpFor(60_000 + i), // above the range sandbox pods cycle through
        hostIP: '192.168.10.11',
        // Days old, seconds apart: filler pods are long-running and never wait on visibility.
        startedAt: startedAt - 86_400_000 * (1 + (i % 9)) - i * 1000,
        extraEnv: app.sidecar ? 14 : 24,
      }),
    );
  }
  return out;
}
