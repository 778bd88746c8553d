// The runner's collector against the generator pods' HTTP protocol, through the fake API server's pod
// proxy. The pod side here is a scripted responder (the real generator cannot be made to split a
// second on cue): a second can reach the runner in parts, and only `complete` says it is whole.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GeneratorCollector } from '../../src/platform/cluster/index.js';
import { type GeneratorParts } from '../../src/kube/index.js';
import type { IntervalData } from '../../src/load/index.js';
import { FakeApiServer } from './fake-apiserver.js';
import { fakeKubeConfig } from './support.js';

const dir = mkdtempSync(join(tmpdir(), 'attestorm-kube-collector-'));
let fake: FakeApiServer;
let pod: Server;
/** What the scripted pod has forwarded so far, and its progress. */
const parts: IntervalData[] = [];
let complete = -1;

const part = (second: number, ok: number): IntervalData => ({
  second,
  counts: { ok, rateLimited: 0, deadlineExceeded: 0, error: 0 },
  byCode: { OK: ok },
  histograms: {},
});

beforeAll(async () => {
  fake = await new FakeApiServer().start();
  pod = createServer((req, res) => {
    const m = /\/parts-from-(\d+)$/.exec(req.url ?? '');
    if (!m) return void res.writeHead(404).end();
    const body: GeneratorParts = { pod: 'generator-0', finished: false, parts: parts.slice(Number(m[1])), next: parts.length, complete };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => pod.listen(0, '127.0.0.1', resolve));
  // The proxy forwards only to pods the API server knows.
  fake.objects.set('/api/v1/namespaces/ns1/pods/generator-0', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'generator-0', namespace: 'ns1' } });
  fake.proxies.set('ns1/generator-0', `http://127.0.0.1:${(pod.address() as AddressInfo).port}`);
});

afterAll(async () => {
  await new Promise<void>((resolve) => pod.close(() => resolve()));
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('generator collector', () => {
  it('keeps every part of a second, and emits a second only once the pod says it is complete', async () => {
    const kc = fakeKubeConfig(fake, join(dir, 'kc.yaml'));
    const c = new GeneratorCollector(kc, 'ns1', ['generator-0']);
    parts.push(part(0, 3));
    await c.pull();
    // Part of second 0 is in, but a worker has not shipped its share yet.
    expect(c.completeUpTo()).toBe(-1);
    parts.push(part(0, 2), part(1, 4));
    complete = 0;
    await c.pull();
    expect(c.completeUpTo()).toBe(0);
    expect(c.agg.emitUpTo(c.completeUpTo()).map((s) => [s.t, s.ok])).toEqual([[0, 5]]);
    // Nothing new: the next pull asks from the same index and adds nothing twice.
    await c.pull();
    complete = 1;
    await c.pull();
    expect(c.agg.emitUpTo(c.completeUpTo()).map((s) => [s.t, s.ok])).toEqual([[1000, 4]]);
    expect(c.agg.lateCalls).toBe(0);
    expect(c.agg.totals.ok).toBe(9);
  });
});
