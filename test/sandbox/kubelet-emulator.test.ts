// The kubelet emulator over real HTTP(S) on loopback: document shape and size, visibility delay,
// failures, latency, bearer token, TLS verified with the generated CA, and 404s.
import { request as httpsRequest } from 'node:https';
import { describe, expect, it } from 'vitest';
import { buildPodDoc, CONFIG_SEEN_ANNOTATION, type KubeletEmulator, type PodDoc } from '../../src/sandbox/index.js';
import { useKubeletEmulators } from '../support/kubelet-emulators.js';

const start = useKubeletEmulators();

function pod(name: string, startedAt = Date.now()): PodDoc {
  return buildPodDoc({
    name,
    namespace: 'storm',
    uid: crypto.randomUUID(),
    labels: { app: 'storm' },
    owner: { kind: 'ReplicaSet', name: 'storm-abcde12345', uid: crypto.randomUUID() },
    nodeName: 'attestorm-node',
    serviceAccount: 'storm-worker',
    containers: [
      {
        name: 'storm',
        image: 'registry.local/storm-worker:1.0',
        imageID: 'registry.local/storm-worker@sha256:' + 'ab'.repeat(32),
        containerID: 'cd'.repeat(32),
      },
    ],
    qosClass: 'BestEffort',
    podIP: '10.244.1.2',
    hostIP: '192.168.10.10',
    startedAt,
  });
}

interface PodListJson {
  kind: string;
  apiVersion: string;
  metadata: object;
  items: Array<{
    metadata: { uid: string; name: string; namespace: string; ownerReferences: Array<{ kind: string; uid: string }> };
    spec: { nodeName: string; serviceAccountName: string; containers: Array<{ image: string }> };
    status: {
      phase: string;
      qosClass: string;
      podIP: string;
      containerStatuses: Array<{ containerID: string; imageID: string; ready: boolean; started: boolean; state: { running?: { startedAt: string } } }>;
    };
  }>;
}

async function getPods(k: KubeletEmulator, headers: Record<string, string> = {}) {
  const res = await fetch(`${k.url}/pods`, { headers });
  const text = await res.text();
  return { status: res.status, text, json: res.status === 200 ? (JSON.parse(text) as PodListJson) : (JSON.parse(text) as { kind: string; code: number }) };
}

describe('kubelet emulator', () => {
  it('serves a v1 PodList of the node: 110 realistic pods, about 1 MiB, sandbox pods first', async () => {
    const mine = [pod('storm-abcde12345-aaaaa'), pod('storm-abcde12345-bbbbb')];
    const k = await start({ podSource: () => mine, fillerPods: 108 });
    const { status, text, json } = await getPods(k);
    expect(status).toBe(200);
    const list = json as PodListJson;
    expect(list.kind).toBe('PodList');
    expect(list.apiVersion).toBe('v1');
    expect(list.items).toHaveLength(110);
    expect(text.length).toBeGreaterThan(0.85 * 2 ** 20);
    expect(text.length).toBeLessThan(1.3 * 2 ** 20);
    expect(k.bytesServed).toBe(Buffer.byteLength(text));
    expect(list.items[0]!.metadata.uid).toBe(mine[0]!.metadata.uid);
    const namespaces = new Set(list.items.map((p) => p.metadata.namespace));
    expect(namespaces.size).toBeGreaterThan(5);
    expect(new Set(list.items.map((p) => p.metadata.uid)).size).toBe(110);
    for (const p of list.items) {
      expect(p.metadata.uid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(p.metadata.ownerReferences[0]!.kind).toBe('ReplicaSet');
      expect(p.spec.nodeName).toBe('attestorm-node');
      expect(p.spec.serviceAccountName).toBeTruthy();
      expect(p.status.phase).toBe('Running');
      expect(['BestEffort', 'Burstable', 'Guaranteed']).toContain(p.status.qosClass);
      for (const cs of p.status.containerStatuses) {
        expect(cs.containerID).toMatch(/^containerd:\/\/[0-9a-f]{64}$/);
        expect(cs.imageID).toMatch(/@sha256:[0-9a-f]{64}$/);
        expect(cs.ready && cs.started).toBe(true);
        expect(cs.state.running?.startedAt).toMatch(/Z$/);
      }
    }
  });

  it('defaults the filler so the node holds 110 pods, the same pods on every start', async () => {
    const a = await start({ podSource: () => [] });
    const b = await start({ podSource: () => [] });
    const [ja, jb] = [(await getPods(a)).json as PodListJson, (await getPods(b)).json as PodListJson];
    expect(ja.items).toHaveLength(110);
    expect(ja.items.map((p) => p.metadata.uid)).toEqual(jb.items.map((p) => p.metadata.uid));
  });

  it('serializes once per change of the visible pod set, not per request', async () => {
    let mine = [pod('storm-abcde12345-aaaaa')];
    const k = await start({ podSource: () => mine, fillerPods: 3 });
    for (let i = 0; i < 5; i++) await getPods(k);
    expect(k.stats().documents).toBe(1);
    mine = [...mine, pod('storm-abcde12345-ccccc')];
    const after = (await getPods(k)).json as PodListJson;
    expect(after.items).toHaveLength(5);
    expect(k.stats().documents).toBe(2);
    mine = mine.slice(1);
    const gone = (await getPods(k)).json as PodListJson;
    expect(gone.items.map((p) => p.metadata.name)).not.toContain('storm-abcde12345-aaaaa');
    expect(k.stats()).toMatchObject({ requests: 7, podsServed: 7, documents: 3 });
  });

  it('shows a new pod only visibilityDelayMs after it started', async () => {
    const fresh = pod('storm-abcde12345-fresh');
    const old = pod('storm-abcde12345-old00', Date.now() - 60_000);
    const k = await start({ podSource: () => [fresh, old], fillerPods: 0, visibilityDelayMs: 800 });
    const seen = Date.parse(fresh.metadata.annotations![CONFIG_SEEN_ANNOTATION]!);
    const first = (await getPods(k)).json as PodListJson;
    // Checked only while still inside the delay, so a slow machine cannot make this flaky.
    if (Date.now() < seen + 800) expect(first.items.map((p) => p.metadata.name)).toEqual(['storm-abcde12345-old00']);
    let names: string[] = [];
    while (!names.includes('storm-abcde12345-fresh')) {
      await new Promise((r) => setTimeout(r, 50));
      names = ((await getPods(k)).json as PodListJson).items.map((p) => p.metadata.name);
    }
    expect(Date.now()).toBeGreaterThanOrEqual(seen + 800);
    expect(names).toContain('storm-abcde12345-old00');
  });

  it('answers 500 for failureRate of the requests', async () => {
    const always = await start({ podSource: () => [], fillerPods: 1, failureRate: 1 });
    const r = await getPods(always);
    expect(r.status).toBe(500);
    expect(r.json).toMatchObject({ kind: 'Status', code: 500 });
    const half = await start({ podSource: () => [], fillerPods: 1, failureRate: 0.5 });
    let failed = 0;
    for (let i = 0; i < 200; i++) if ((await fetch(`${half.url}/pods`).then(async (x) => (await x.arrayBuffer(), x.status))) === 500) failed++;
    // Binomial(200, 0.5): 40..160 is more than eight standard deviations wide.
    expect(failed).toBeGreaterThan(40);
    expect(failed).toBeLessThan(160);
    expect(half.stats().failures).toBe(failed);
  });

  it('holds each /pods response for latencyMs', async () => {
    const k = await start({ podSource: () => [], fillerPods: 1, latencyMs: 300 });
    const t0 = performance.now();
    let answered = false;
    const pending = getPods(k).then((r) => ((answered = true), r));
    await new Promise((r) => setTimeout(r, 100));
    expect(answered).toBe(false);
    expect((await pending).status).toBe(200);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(295);
  });

  it('with a service time answers /pods one at a time, first come first served, after the latency', async () => {
    // Lower bounds only (timers never fire early): the k-th of n simultaneous requests waits for the
    // k-1 before it, so the last one cannot be answered before n service times plus the latency.
    const k = await start({ podSource: () => [], fillerPods: 1, latencyMs: 20, serviceTimeMs: 40 });
    const t0 = performance.now();
    const done: number[] = [];
    await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        getPods(k).then((r) => {
          expect(r.status).toBe(200);
          done.push(performance.now() - t0);
          return i;
        }),
      ),
    );
    done.sort((a, b) => a - b);
    expect(done[4]).toBeGreaterThanOrEqual(20 + 5 * 40 - 5);
    expect(done[0]).toBeGreaterThanOrEqual(20 + 40 - 5);
    // Some request queued behind another; how long depends on how close together the five arrived (a
    // busy machine spreads them out), so its bound is the answers' times above, not a wait of its own.
    expect(k.stats().maxQueueWaitMs).toBeGreaterThan(0);
    expect(k.stats().maxQueueWaitMs).toBeLessThanOrEqual(done[4]!);
    expect(k.stats().podsServed).toBe(5);
  });

  it('without a service time keeps no queue: simultaneous requests all take just the latency', async () => {
    const k = await start({ podSource: () => [], fillerPods: 1, latencyMs: 0 });
    await Promise.all(Array.from({ length: 5 }, () => getPods(k)));
    expect(k.stats().maxQueueWaitMs).toBe(0);
  });

  it('listens on loopback only, by default and as asked', async () => {
    const k = await start({ podSource: () => [], fillerPods: 1 });
    expect(new URL(k.url).hostname).toBe('127.0.0.1');
    const v6 = await start({ podSource: () => [], fillerPods: 1, listen: '[::1]:0' }).catch(() => null);
    if (v6) expect(new URL(v6.url).hostname).toBe('[::1]');
  });

  it('requires the bearer token when one is set', async () => {
    const k = await start({ podSource: () => [], fillerPods: 1, token: 's3cret-token' });
    expect((await getPods(k)).status).toBe(401);
    expect((await getPods(k, { authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await getPods(k, { authorization: 's3cret-token' })).status).toBe(401);
    const ok = await getPods(k, { authorization: 'Bearer s3cret-token' });
    expect(ok.status).toBe(200);
    expect(k.stats()).toMatchObject({ unauthorized: 3, podsServed: 1 });
  });

  it('serves HTTPS with a self-signed certificate that verifies against the generated CA only', async () => {
    const k = await start({ podSource: () => [], fillerPods: 2, tls: true });
    expect(k.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(k.caPem).toMatch(/^-----BEGIN CERTIFICATE-----/);
    const get = (ca?: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpsRequest(`${k.url}/pods`, { ca, agent: false }, (res) => {
          let body = '';
          res
            .setEncoding('utf8')
            .on('data', (c: string) => (body += c))
            .on('end', () => resolve({ status: res.statusCode!, body }));
        });
        req.on('error', reject).end();
      });
    const ok = await get(k.caPem!);
    expect(ok.status).toBe(200);
    expect((JSON.parse(ok.body) as PodListJson).items).toHaveLength(2);
    await expect(get()).rejects.toThrow(/self[- ]signed|unable to verify/i);
  });

  it('answers 404 JSON on other paths and 405 on other methods', async () => {
    const k = await start({ podSource: () => [], fillerPods: 1 });
    for (const path of ['/', '/healthz', '/pods/extra', '/spec']) {
      const res = await fetch(`${k.url}${path}`);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(await res.json()).toMatchObject({ kind: 'Status', code: 404, reason: 'NotFound' });
    }
    const post = await fetch(`${k.url}/pods`, { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
    await post.arrayBuffer();
    expect((await fetch(`${k.url}/pods?fieldSelector=x`)).status).toBe(200);
    expect(k.stats().notFound).toBe(5);
  });

  it('closes idempotently and stops listening', async () => {
    const k = await start({ podSource: () => [], fillerPods: 1 });
    await Promise.all([k.close(), k.close()]);
    await expect(fetch(`${k.url}/pods`)).rejects.toThrow();
  });
});
