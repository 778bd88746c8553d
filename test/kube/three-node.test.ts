// scenario.cluster.topology three-node: where the rendered pods go (the agent DaemonSet on both
// workers, storm pods beside the agent under test, bystanders on the quiet node, spire-server on
// the control plane), how the nodes are chosen from a cluster's node list, the refusals before
// anything starts (a local run; a cluster of fewer than 3 nodes, against the FAKE API server), and
// what the server side reads: spire-server's log and the kubelets' stats.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { nodeRolesOf, renderScenario, singleNodeOf, type KubeObject, type NodeFacts } from '../../src/kube/index.js';
import { localPlatform } from '../../src/platform/local/index.js';
import { clusterPlatform } from '../../src/platform/cluster/index.js';
import { countAttestations } from '../../src/platform/cluster/server-attestations.js';
import { podStatOf, PodStatTrack } from '../../src/platform/cluster/node-stats.js';
import { parseScenario, readScenarioFile } from '../../src/scenario/index.js';
import { FakeApiServer } from './fake-apiserver.js';
import { fakeKubeConfig } from './support.js';

const THREE_NODE = join(import.meta.dirname, '../../scenarios/three-node.yaml');
const role = (o: KubeObject) => o.metadata.labels?.['attestorm.dev/role'];
const podSpec = (o: KubeObject) => (o.kind === 'Pod' ? (o.spec as any) : (o.spec as any).template.spec);

describe('three-node rendering', () => {
  const { scenario } = readScenarioFile(THREE_NODE);
  const nodes = { storm: 'n-worker', quiet: 'n-worker2', server: 'n-control-plane' };
  const rendered = renderScenario(scenario, { runId: 'three-20261206-020000', withSpire: true, nodes, memorySampler: true });

  it('runs the agent DaemonSet on both workers and nowhere else', () => {
    for (const r of rendered) {
      const ds = r.objects.find((o) => o.kind === 'DaemonSet')!;
      expect(podSpec(ds).nodeSelector).toBeUndefined();
      expect(podSpec(ds).affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms).toEqual([
        { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['n-worker', 'n-worker2'] }] },
      ]);
    }
  });

  it('puts the storm pods and the memory sampler on the storm node, the bystanders on the quiet node', () => {
    for (const r of rendered) {
      const on = (which: string) => r.objects.filter((o) => role(o) === which).map((o) => podSpec(o).nodeSelector['kubernetes.io/hostname']);
      expect(on('generator')).toEqual(['n-worker', 'n-worker']);
      expect(on('bystander')).toEqual(['n-worker2']);
      expect(on('memory-sampler')).toEqual(['n-worker']);
    }
  });

  it('puts spire-server on the control plane, tolerating its taint', () => {
    const spire = rendered.find((r) => r.variant.kind === 'spire')!;
    const server = podSpec(spire.objects.find((o) => o.kind === 'Deployment')!);
    expect(server.nodeSelector).toEqual({ 'kubernetes.io/hostname': 'n-control-plane' });
    expect(server.tolerations).toEqual([{ key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' }]);
    expect(server.hostNetwork).toBeUndefined();
  });

  it("takes kind's node names when no nodes are given (attestorm kind render)", () => {
    const [r] = renderScenario(scenario, { runId: 'three-20261206-020000', clusterName: 'three' });
    expect(r!.ctx.nodes).toEqual({ storm: 'three-worker', quiet: 'three-worker2', server: 'three-control-plane' });
  });

  it('leaves a single-node scenario where it was: no node affinity, no node selector, no toleration', () => {
    const { scenario: one } = parseScenario({ name: 'one', load: { bystanders: { pods: 1 } } });
    for (const r of renderScenario(one, { runId: 'one-20261206-020000', withSpire: true })) {
      expect(r.ctx.nodes).toBeUndefined();
      for (const o of r.objects.filter((x) => ['Pod', 'DaemonSet', 'Deployment'].includes(x.kind))) {
        expect(podSpec(o).nodeSelector, `${o.kind} ${o.metadata.name}`).toBeUndefined();
        expect(podSpec(o).tolerations).toBeUndefined();
        expect(podSpec(o).affinity?.nodeAffinity).toBeUndefined();
      }
    }
  });
});

describe('the nodes of a three-node run', () => {
  const node = (name: string, o: Partial<NodeFacts> = {}): NodeFacts => ({ name, labels: {}, blockingTaints: [], ready: true, ...o });
  const cp = node('k-control-plane', { labels: { 'node-role.kubernetes.io/control-plane': '' }, blockingTaints: ['node-role.kubernetes.io/control-plane'] });

  it('serves from the control plane, storms the first worker by name, keeps the second quiet', () => {
    expect(nodeRolesOf([node('k-worker2'), cp, node('k-worker')])).toEqual({ storm: 'k-worker', quiet: 'k-worker2', server: 'k-control-plane' });
  });

  it('says what the cluster lacks', () => {
    expect(nodeRolesOf([cp, node('k-worker')])).toBe('needs 3 nodes (a control plane and two workers), the cluster has 2 (k-control-plane, k-worker)');
    expect(nodeRolesOf([node('a'), node('b'), node('c')])).toMatch(/^needs a control-plane node .* none of a, b, c has one$/);
    expect(nodeRolesOf([cp, node('k-worker'), node('k-worker2', { ready: false })])).toMatch(/^needs two ready, untainted workers .* has 1 /);
    expect(nodeRolesOf([cp, node('k-worker'), node('k-worker2', { blockingTaints: ['dedicated'] })])).toMatch(/has 1 /);
  });

  it('a single-node scenario in a cluster of several: the first ready, untainted worker by name; none chosen on one node', () => {
    expect(singleNodeOf([node('k-worker2'), cp, node('k-worker')])).toBe('k-worker');
    expect(singleNodeOf([cp, node('k-worker', { ready: false }), node('k-worker2')])).toBe('k-worker2');
    expect(singleNodeOf([cp, node('other', { labels: { 'node-role.kubernetes.io/control-plane': '' } })])).toBe('other');
    expect(singleNodeOf([cp])).toBeNull();
  });

  it('a single-node scenario pinned to its node: agent, storm, bystanders and the memory sampler all there', () => {
    const { scenario } = readScenarioFile(join(import.meta.dirname, '../../scenarios/ci-kind.yaml'));
    for (const r of renderScenario(scenario, { runId: 'one-20261206-020000', nodeName: 'k-worker', memorySampler: true })) {
      const pods = r.objects.filter((o) => ['DaemonSet', 'Pod', 'Job', 'Deployment'].includes(o.kind));
      expect(pods.length).toBeGreaterThan(2);
      for (const o of pods) expect(podSpec(o).nodeSelector, `${o.kind} ${String(o.metadata?.name)}`).toEqual({ 'kubernetes.io/hostname': 'k-worker' });
    }
  });
});

describe('three-node refusals, before anything starts', () => {
  it('a scenario without bystanders: the quiet node would have nothing to measure', () => {
    expect(() => parseScenario({ name: 'x', cluster: { topology: 'three-node' } })).toThrow(/load\.bystanders.*must be set with cluster\.topology three-node/);
    expect(() => parseScenario({ name: 'x', cluster: { topology: 'five-node' } })).toThrow(/cluster\.topology/);
  });

  it('a local run', () => {
    const { scenario } = readScenarioFile(THREE_NODE);
    expect(localPlatform.problems(scenario)).toEqual([
      expect.stringMatching(/^cluster\.topology three-node places .* on 3 nodes of a cluster: run it with --cluster kind:<name>/),
    ]);
    const { scenario: one } = parseScenario({ name: 'one' });
    expect(localPlatform.problems(one)).toEqual([]);
  });

  describe('a cluster of one node (the FAKE API server)', () => {
    let fake: FakeApiServer;
    const dir = mkdtempSync(join(tmpdir(), 'attestorm-three-node-'));
    beforeAll(async () => {
      fake = await new FakeApiServer().start();
    });
    afterAll(async () => {
      await fake.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('is refused by the platform as it prepares, naming the node it has; a single-node scenario is not', async () => {
      const kc = fakeKubeConfig(fake, join(dir, 'kubeconfig'));
      const platform = clusterPlatform({ kc, target: { context: 'kind-fake', kindName: null }, clusterName: 'fake', nodeCgroup: null, note: null });
      const { scenario } = readScenarioFile(THREE_NODE);
      const err = await platform.prepare(scenario).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).message).toMatch(
        /scenario three-node: cluster\.topology three-node needs 3 nodes .* has 1 \(fake-control-plane\) in kind-fake/,
      );
      const { scenario: one } = parseScenario({ name: 'one' });
      await expect(platform.prepare(one)).resolves.toMatchObject({ measurement: { oomFidelity: 'cgroup-oom' } });
    });
  });
});

describe("the server side: spire-server's log, the kubelets' stats", () => {
  it('counts node attestations per node and since the load started', () => {
    const line = (time: string, uid: string) =>
      `time="${time}" level=info msg="Agent attestation request completed" address="10.244.1.3:40024" agent_id="spiffe://example.org/spire/agent/k8s_psat/three/${uid}" authorized_as=nobody method=AttestAgent node_attestor_type=k8s_psat`;
    const log = [
      line('2026-12-06T02:00:01Z', 'uid-a'),
      'time="2026-12-06T02:00:01Z" level=info msg="Signed X509 SVID" caller_id="spiffe://example.org/spire/agent/k8s_psat/three/uid-a"',
      line('2026-12-06T02:00:02Z', 'uid-b'),
      line('2026-12-06T02:00:30Z', 'uid-a'),
      line('2026-12-06T02:00:40Z', 'uid-x'),
    ].join('\n');
    const nodes = new Map([
      ['uid-a', 'three-worker'],
      ['uid-b', 'three-worker2'],
    ]);
    expect(countAttestations(log, nodes, Date.parse('2026-12-06T02:00:20Z'))).toEqual({
      total: 4,
      duringLoad: 2,
      byNode: { 'three-worker': 2, 'three-worker2': 1, 'uid-x': 1 },
    });
  });

  it('takes a pod out of /stats/summary and tracks its peaks and CPU, across a restart', () => {
    const summary = (cpu: number, ws: number, time: string) => ({
      node: { nodeName: 'n' },
      pods: [
        { podRef: { name: 'other', namespace: 'ns' }, memory: { workingSetBytes: 1 } },
        {
          podRef: { name: 'spire-server-abc', namespace: 'ns' },
          cpu: { time, usageCoreNanoSeconds: cpu },
          memory: { workingSetBytes: ws, usageBytes: ws + 10 },
        },
      ],
    });
    expect(podStatOf(summary(0, 0, '2026-12-06T02:00:00Z'), 'ns', 'missing')).toBeNull();
    const t = new PodStatTrack();
    t.add(podStatOf(summary(1e9, 50, '2026-12-06T02:00:00Z'), 'ns', 'spire-server-abc')!);
    t.add(podStatOf(summary(3e9, 80, '2026-12-06T02:00:10Z'), 'ns', 'spire-server-abc')!);
    // The same reading again (the kubelet had not refreshed): nothing new.
    t.add(podStatOf(summary(3e9, 80, '2026-12-06T02:00:10Z'), 'ns', 'spire-server-abc')!);
    // Restarted: the counter starts again.
    t.add(podStatOf(summary(0.5e9, 60, '2026-12-06T02:00:20Z'), 'ns', 'spire-server-abc')!);
    expect(t.peakWorkingSetBytes).toBe(80);
    expect(t.peakUsageBytes).toBe(90);
    expect(t.peakCores).toBeCloseTo(0.2);
    expect(t.cpuSeconds(Date.parse('2026-12-06T02:00:05Z'), Date.parse('2026-12-06T02:00:30Z'))).toBeCloseTo(2.5);
    expect(t.cpuSeconds(Date.parse('2026-12-06T02:00:10Z'), Date.parse('2026-12-06T02:00:15Z'))).toBeNull();
  });
});
