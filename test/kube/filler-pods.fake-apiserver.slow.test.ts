// Filler pods: the node's other pods, so the kubelet's /pods is as large as a full node's. Rendered
// (sizes, names, the selector no node matches) and placed against the FAKE API server, which
// rejects them at admission as a kubelet does (on the real cluster: test/cluster/real-cluster.slow.test.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseScenario } from '../../src/scenario/index.js';
import { DEFAULT_NODE_PODS } from '../../src/sandbox/options.js';
import { applyObjects, placeFillerPods } from '../../src/platform/cluster/index.js';
import { fillerCount, clusterVariant, manifestProblems, renderContext, renderFillerPods } from '../../src/kube/index.js';
import { renderNamespace } from '../../src/kube/render/base.js';
import { FakeApiServer } from './fake-apiserver.js';
import { fakeKubeConfig } from './support.js';

const dir = mkdtempSync(join(tmpdir(), 'attestorm-filler-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function ctxFor(agent: Record<string, unknown>, load: Record<string, unknown> = { pods: 2, workersPerPod: 2 }) {
  const s = parseScenario({ name: 'filler', duration: '2s', placements: ['disabled'], agent, load }).scenario;
  return renderContext(s, clusterVariant(s.variants[0]!), { runId: 'filler' });
}

describe('filler pods', () => {
  it("fill the node up to the kubelet's 110 pods beside the run's own, or as many as agent.kubelet.fillerPods says", () => {
    expect(fillerCount(ctxFor({ attestors: ['k8s'] }))).toBe(DEFAULT_NODE_PODS - 1 - 2);
    expect(fillerCount(ctxFor({ attestors: ['k8s'] }, { pods: 3, workersPerPod: 1, bystanders: { pods: 1, rate: 1 } }))).toBe(DEFAULT_NODE_PODS - 1 - 3 - 1);
    expect(fillerCount(ctxFor({ attestors: ['k8s'], kubelet: { fillerPods: 7 } }))).toBe(7);
    // A unix-only agent never reads /pods: no filler.
    expect(fillerCount(ctxFor({ attestors: ['unix'] }))).toBe(0);
  });

  it('are ~10 KiB each, bound to the node with a selector no node carries, and pass the manifest checks', () => {
    const ctx = ctxFor({ attestors: ['k8s'] });
    const pods = renderFillerPods(ctx, 'node-a', 107);
    expect(new Set(pods.map((p) => p.metadata.name)).size).toBe(107);
    const bytes = pods.reduce((n, p) => n + JSON.stringify(p).length, 0);
    // The kubelet adds status and managed fields on top (about 1.1 MB for 105 of them on a real node).
    expect(bytes / 107).toBeGreaterThan(2500);
    for (const p of pods) {
      expect((p.spec as any).nodeName).toBe('node-a');
      expect((p.spec as any).nodeSelector).toEqual({ 'attestorm.dev/filler': 'never-scheduled' });
      expect(p.metadata.labels!['attestorm.dev/role']).toBe('filler');
    }
    expect(manifestProblems(pods, ctx).filter((m) => !m.includes('no agent DaemonSet'))).toEqual([]);
    expect(renderFillerPods(ctx, 'node-a', 107)).toEqual(pods);
  });

  it('are placed and waited for until the kubelet lists every one as rejected', async () => {
    const fake = await new FakeApiServer().start();
    try {
      const kc = fakeKubeConfig(fake, join(dir, 'kc.yaml'));
      const ctx = ctxFor({ attestors: ['k8s'], kubelet: { fillerPods: 12 } });
      await applyObjects(kc, [renderNamespace(ctx)]);
      const r = await placeFillerPods(kc, ctx, 'fake-control-plane', new AbortController().signal, 10_000);
      expect(r.count).toBe(12);
      const applied = fake.applies.filter((a) => a.kind === 'Pod' && a.name?.startsWith('filler-'));
      expect(applied).toHaveLength(12);
    } finally {
      await fake.close();
    }
  });
});
