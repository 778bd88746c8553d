// SPIRE on a cluster whose API server listens on the node's loopback (no kube-proxy, no cluster
// DNS): spire-server on the host network with the API server's address, the agent dialling it on
// loopback, the two health ports apart. Elsewhere: the Service and its DNS name, as before.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Deployment } from 'kubernetes-models/apps/v1';
import { readScenarioFile } from '../../src/scenario/index.js';
import { clusterVariant, manifestProblems, renderContext, renderVariant, type KubeObject } from '../../src/kube/index.js';
import { loopbackApiServer } from '../../src/platform/cluster/index.js';

const { scenario } = readScenarioFile(join(import.meta.dirname, '../cluster/fixtures/spire-cluster.yaml'));
const variant = clusterVariant(scenario.variants[0]!, {
  serverImage: 'docker.io/library/attestorm-spire-server:1.16.0-k',
  agentImage: 'docker.io/library/attestorm-spire-agent:1.16.0-k',
});
const render = (hostApiServer?: { host: string; port: number }) => {
  const ctx = renderContext(scenario, variant, {
    runId: 'r1',
    clusterName: 'attestorm-local',
    memorySampler: true,
    ...(hostApiServer ? { hostApiServer } : {}),
  });
  return { ctx, objects: renderVariant(ctx) };
};
const find = (objects: KubeObject[], kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name) as any;

describe('spire-server where the API server is on the node loopback', () => {
  it('runs on the host network with the API server address, and the agent dials it on loopback', () => {
    const { ctx, objects } = render({ host: '127.0.0.1', port: 6443 });
    expect(manifestProblems(objects, ctx)).toEqual([]);
    const server = find(objects, 'Deployment', 'spire-server');
    new Deployment(server).validate();
    const pod = server.spec.template.spec;
    expect(pod.hostNetwork).toBe(true);
    expect(pod.containers[0].env).toEqual([
      { name: 'KUBERNETES_SERVICE_HOST', value: '127.0.0.1' },
      { name: 'KUBERNETES_SERVICE_PORT', value: '6443' },
    ]);
    expect(pod.containers[0].readinessProbe.httpGet.port).toBe(8082);
    const serverConf: string = find(objects, 'ConfigMap', 'spire-server-config').data['server.conf'];
    expect(serverConf).toMatch(/bind_address = "127\.0\.0\.1"\n\s+bind_port = "8081"/);
    expect(serverConf).toMatch(/health_checks \{[^}]*bind_port = "8082"/);
    const agentConf: string = find(objects, 'ConfigMap', 'spire-agent-config').data['agent.conf'];
    expect(agentConf).toContain('server_address = "127.0.0.1"');
    expect(agentConf).toMatch(/health_checks \{[^}]*bind_port = "8080"/);
    expect(find(objects, 'DaemonSet', 'agent').spec.template.spec.containers[0].image).toBe('docker.io/library/attestorm-spire-agent:1.16.0-k');
  });

  it('elsewhere: the pod network, the Service by DNS name', () => {
    const { ctx, objects } = render();
    const pod = find(objects, 'Deployment', 'spire-server').spec.template.spec;
    expect(pod.hostNetwork).toBeUndefined();
    expect(pod.containers[0].env).toBeUndefined();
    expect(find(objects, 'ConfigMap', 'spire-agent-config').data['agent.conf']).toContain(`server_address = "spire-server.${ctx.namespace}.svc.cluster.local"`);
  });
});

describe('loopbackApiServer', () => {
  it('is set for an API server on loopback, null elsewhere', () => {
    expect(loopbackApiServer('https://127.0.0.1:6443')).toEqual({ host: '127.0.0.1', port: 6443 });
    expect(loopbackApiServer('https://localhost')).toEqual({ host: '127.0.0.1', port: 443 });
    expect(loopbackApiServer('https://[::1]:6443')).toEqual({ host: '::1', port: 6443 });
    expect(loopbackApiServer('https://10.0.0.1:6443')).toBeNull();
    expect(loopbackApiServer(undefined)).toBeNull();
  });
});
