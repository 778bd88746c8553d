// The pod list's size as a dimension: the kubelet emulator's GET /pods grows with the pods on the
// node, the containers per pod and the terminated pods still listed; an unshaped list is the one it
// always served; a ~1 MiB list and a much larger one are reachable; and the reference agent's k8s
// attestor still finds its caller's pod in a large list.
import { createHash } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startKubeletEmulator, type KubeletEmulator } from '../../src/sandbox/index.js';
import { useKubeletEmulators } from '../support/kubelet-emulators.js';
import { STORM_CONTAINER_ID, STORM_POD_UID, stormPodDoc } from '../support/storm-pod.js';
import { fillerPods, terminatedPods } from '../../src/sandbox/filler-pods.js';
import { fakeProcRoot, podCgroup, scrape, startTestAgent, tempDir, unary } from '../agent/harness.js';

const start = useKubeletEmulators();

const UID = STORM_POD_UID;
const CID = STORM_CONTAINER_ID;
const stormPod = () => stormPodDoc();

interface PodJson {
  metadata: { uid: string; ownerReferences: Array<{ kind: string }> };
  spec: { containers: unknown[]; restartPolicy: string };
  status: { phase: string; containerStatuses: Array<{ ready: boolean; state: { running?: object; terminated?: { exitCode: number; reason: string } } }> };
}

async function getPods(k: KubeletEmulator): Promise<{ bytes: number; items: PodJson[] }> {
  const body = Buffer.from(await (await fetch(`${k.url}/pods`)).arrayBuffer());
  return { bytes: body.length, items: (JSON.parse(body.toString('utf8')) as { items: PodJson[] }).items };
}

const MiB = 2 ** 20;

describe('pod list size', () => {
  it('an unshaped list is byte for byte the one the emulator has always served', () => {
    // Golden digest of the 110 filler pods at a fixed time, taken before the list had a shape.
    const json = JSON.stringify(fillerPods(110, 'attestorm-node', 1_700_000_000_000));
    expect(json.length).toBe(1_065_487);
    expect(createHash('sha256').update(json).digest('hex').slice(0, 16)).toBe('921e304c78f8f14d');
  });

  it('grows with the pods on the node, the containers per pod and the terminated pods, as podList() reports', async () => {
    const sizes: Record<string, number> = {};
    for (const [name, shape] of [
      ['10 pods', { nodePods: 10 }],
      ['110 pods', {}],
      ['110 pods × 4 containers', { containersPerPod: 4 }],
      ['110 pods × 4 + 200 terminated', { containersPerPod: 4, terminatedPods: 200 }],
    ] as const) {
      const k = await start({ podSource: () => [stormPod()], ...shape });
      const served = await getPods(k);
      const snap = k.podList();
      expect(snap.bytes, name).toBe(served.bytes);
      expect(snap.items, name).toBe(served.items.length);
      expect(k.stats().maxDocumentBytes, name).toBe(served.bytes);
      sizes[name] = served.bytes;
    }
    expect(sizes['10 pods']!).toBeLessThan(sizes['110 pods']!);
    expect(sizes['110 pods']!).toBeLessThan(sizes['110 pods × 4 containers']!);
    expect(sizes['110 pods × 4 containers']!).toBeLessThan(sizes['110 pods × 4 + 200 terminated']!);
    // The default node is the field's "about 1 MiB on a busy node".
    expect(sizes['110 pods']! / MiB).toBeGreaterThan(0.9);
    expect(sizes['110 pods']! / MiB).toBeLessThan(1.2);
    console.log(
      `pod list sizes: ${Object.entries(sizes)
        .map(([n, b]) => `${n} ${(b / MiB).toFixed(2)} MiB`)
        .join(', ')}`,
    );
  });

  it("counts the node's running pods with the source's own, and lists terminated pods as ended Job pods", async () => {
    const k = await start({ podSource: () => [stormPod()], nodePods: 20, containersPerPod: 3, terminatedPods: 16 });
    const { items } = await getPods(k);
    expect(k.podList()).toMatchObject({ items: 36, runningPods: 20, terminatedPods: 16, containersPerPod: 3 });
    const running = items.filter((p) => p.status.phase === 'Running');
    const ended = items.filter((p) => p.status.phase !== 'Running');
    expect(running).toHaveLength(20);
    expect(ended).toHaveLength(16);
    // The source's pod keeps its one container; the others have three.
    expect(running[0]!.metadata.uid).toBe(UID);
    expect(running[0]!.spec.containers).toHaveLength(1);
    for (const p of [...running.slice(1), ...ended]) expect(p.spec.containers).toHaveLength(3);
    expect(ended.filter((p) => p.status.phase === 'Failed')).toHaveLength(2);
    for (const p of ended) {
      expect(p.metadata.ownerReferences[0]!.kind).toBe('Job');
      expect(p.spec.restartPolicy).toBe('Never');
      for (const c of p.status.containerStatuses) {
        expect(c.ready).toBe(false);
        expect(c.state.running).toBeUndefined();
        expect(c.state.terminated!.exitCode === 0 ? 'Succeeded' : 'Failed').toBe(p.status.phase);
      }
    }
    // Terminated pods are pods of their own: no UID shared with a running one.
    expect(new Set(items.map((p) => p.metadata.uid)).size).toBe(36);
  });

  it('is deterministic: the same shape at the same time gives the same pods', () => {
    const a = JSON.stringify(terminatedPods(50, 'n1', 1_700_000_000_000, { containersPerPod: 5 }));
    const b = JSON.stringify(terminatedPods(50, 'n1', 1_700_000_000_000, { containersPerPod: 5 }));
    expect(a).toBe(b);
  });

  it('refuses bad shapes naming the key and the rule', async () => {
    await expect(startKubeletEmulator({ podSource: () => [], terminatedPods: -1 })).rejects.toThrow(/kubelet\.terminatedPods/);
    await expect(startKubeletEmulator({ podSource: () => [], containersPerPod: 0 })).rejects.toThrow(/kubelet\.containersPerPod/);
    await expect(startKubeletEmulator({ podSource: () => [], nodePods: 100_000 })).rejects.toThrow(/kubelet\.nodePods/);
  });

  describe('the reference agent in a large list', () => {
    const dir = tempDir();
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it("its k8s attestor finds the caller's pod among 250 pods × 4 containers and 300 terminated pods", async () => {
      const k = await start({ podSource: () => [stormPod()], nodePods: 250, containersPerPod: 4, terminatedPods: 300 });
      const bytes = k.podList().bytes;
      expect(bytes).toBeGreaterThan(5 * MiB);
      const entries = join(dir, 'entries.yaml');
      writeFileSync(
        entries,
        `entries:\n  - spiffeId: spiffe://example.org/found\n    selectors: ["k8s:pod-uid:${UID}", "k8s:ns:storm", "k8s:sa:storm-worker"]\n`,
      );
      const t = await startTestAgent({
        socket: join(dir, 'agent.sock'),
        procRoot: fakeProcRoot(dir, { [process.pid]: podCgroup(UID, CID) }),
        attestors: ['k8s'],
        entries,
        k8s: { kubeletUrl: k.url, timeout: '30s', pollInterval: '10ms', maxPollAttempts: 2 },
      });
      try {
        const res = await unary<object, { svids: Array<{ spiffe_id: string }> }>(t.client(), 'FetchJWTSVID', { audience: ['a'] });
        expect(res.svids.map((s) => s.spiffe_id)).toEqual(['spiffe://example.org/found']);
        // The agent read the whole list, as served.
        expect(await scrape(t.agent.metricsUrl!, 'workload_api_kubelet_fetch_bytes_total')).toBe(bytes);
        console.log(`reference agent found its pod in a ${(bytes / MiB).toFixed(2)} MiB /pods list (${k.podList().items} pods)`);
      } finally {
        await t.stop();
      }
    });
  });
});
