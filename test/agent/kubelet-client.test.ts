import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createKubeletClient, KubeletError, type KubeletClient, type KubeletClientOptions } from '../../src/agent/kubelet-client.js';
import { ConfigError } from '../../src/errors.js';
import { generateServingCert } from '../../src/sandbox/self-signed.js';
import { makePod, startFakeKubelet, type FakeKubelet } from './fake-kubelet.js';

const UID = '2c48913c-b29f-11e7-9350-020968147796';
const CID = '9bca8d63d5fa610783847915bcff0ecac1273e5b4bed3f6fa1b07350e0135961';
const tmp = mkdtempSync(join(tmpdir(), 'attestorm-kubelet-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const open: { kubelets: FakeKubelet[]; clients: KubeletClient[] } = { kubelets: [], clients: [] };
afterEach(async () => {
  for (const c of open.clients.splice(0)) c.close();
  await Promise.all(open.kubelets.splice(0).map((k) => k.close()));
});

async function kubelet(tls?: { key: Buffer; cert: Buffer }): Promise<FakeKubelet> {
  const k = await startFakeKubelet(tls);
  open.kubelets.push(k);
  return k;
}

function client(over: Partial<KubeletClientOptions> & { url: string }): KubeletClient {
  const c = createKubeletClient({ timeoutMs: 2000, pollIntervalMs: 50, maxPollAttempts: 5, ...over });
  open.clients.push(c);
  return c;
}

const byUid = (uid: string) => (l: { byUid: ReadonlyMap<string, unknown> }) => l.byUid.get(uid);

async function failure(p: Promise<unknown>): Promise<KubeletError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(KubeletError);
  return err as KubeletError;
}

describe('KubeletClient', () => {
  it('fetches and indexes the pod list, with the bearer token, reporting bytes', async () => {
    const k = await kubelet();
    k.pods = [makePod({ uid: UID, containers: [{ name: 'app', image: 'app:1', containerID: `containerd://${CID}` }] })];
    const tokenFile = join(tmp, 'token');
    writeFileSync(tokenFile, 'secret-1\n');
    const fetches: [string, number][] = [];
    const c = client({ url: k.url, tokenFile, onFetch: (o, b) => fetches.push([o, b]) });
    const hit = await c.waitFor((l) => l.byContainerId.get(CID), `container ${CID}`);
    expect(hit.pod.metadata.uid).toBe(UID);
    expect(hit.status.name).toBe('app');
    expect(k.requests).toEqual([expect.objectContaining({ path: '/pods', authorization: 'Bearer secret-1' })]);
    expect(fetches).toHaveLength(1);
    expect(fetches[0]![0]).toBe('ok');
    expect(fetches[0]![1]).toBe(c.lastList!.bytes);
    expect(c.lastList!.bytes).toBeGreaterThan(100);
  });

  it('a modeled parse working set rides on every parsed list (resident: every page touched); none by default', async () => {
    const k = await kubelet();
    k.pods = [makePod({ uid: UID })];
    const plain = client({ url: k.url });
    await plain.waitFor(byUid(UID), `pod ${UID}`);
    expect(plain.lastList!.workingSet).toBeNull();
    const heavy = client({ url: k.url, listWorkingSetBytes: 3 * 2 ** 20 });
    await heavy.waitFor(byUid(UID), `pod ${UID}`);
    const ws = heavy.lastList!.workingSet!;
    expect(ws.length).toBe(3 * 2 ** 20);
    for (let i = 0; i < ws.length; i += 4096) expect(ws[i]).toBe(1);
    // Older agents' own fetches carry it too.
    const own = client({ url: k.url, shareFetches: false, listWorkingSetBytes: 2 ** 20 });
    const hit = await own.waitFor((l) => (l.byUid.get(UID) ? l : undefined), `pod ${UID}`);
    expect(hit.workingSet!.length).toBe(2 ** 20);
  });

  it('single-flight: 50 concurrent callers share one request', async () => {
    const k = await kubelet();
    k.pods = [makePod({ uid: UID })];
    k.delayMs = 100;
    const c = client({ url: k.url, pollIntervalMs: 5000 });
    const results = await Promise.all(Array.from({ length: 50 }, () => c.waitFor(byUid(UID), `pod ${UID}`)));
    expect(results.every((p) => p !== undefined)).toBe(true);
    expect(k.requests).toHaveLength(1);
    // A caller right after reuses the fresh list (fetched less than a poll interval ago).
    expect(await c.waitFor(byUid(UID), 'x')).toBeDefined();
    expect(k.requests).toHaveLength(1);
  });

  it('an unlisted pod: polls no faster than the interval, up to maxPollAttempts, then the documented error', async () => {
    const k = await kubelet();
    const c = client({ url: k.url, pollIntervalMs: 80, maxPollAttempts: 4 });
    const t0 = performance.now();
    const err = await failure(c.waitFor(byUid(UID), `pod ${UID}`));
    // Lower bounds only: timers never fire early (beyond clock rounding), they may fire late.
    expect(performance.now() - t0).toBeGreaterThanOrEqual(3 * 80 - 2);
    expect(err.reason).toBe('not-found');
    expect(err.message).toBe(`pod ${UID} not found in kubelet pod list after 4 attempts`);
    expect(k.requests).toHaveLength(4);
    // From the second request on the connection is reused, so arrival gaps track send gaps.
    for (let i = 2; i < k.requests.length; i++) {
      expect(k.requests[i]!.at - k.requests[i - 1]!.at).toBeGreaterThanOrEqual(60);
    }
  });

  it('many callers waiting for unlisted pods still cause one request per interval', async () => {
    const k = await kubelet();
    const c = client({ url: k.url, pollIntervalMs: 40, maxPollAttempts: 3 });
    const errs = await Promise.all(Array.from({ length: 20 }, (_, i) => failure(c.waitFor(byUid(`missing-${i}`), `pod missing-${i}`))));
    expect(errs.every((e) => e.reason === 'not-found')).toBe(true);
    expect(k.requests).toHaveLength(3);
  });

  it('shareFetches false (older agents): every caller fetches and parses its own list, attempts spaced by the interval', async () => {
    const k = await kubelet();
    k.pods = [makePod({ uid: UID })];
    k.delayMs = 50;
    const c = client({ url: k.url, pollIntervalMs: 40, maxPollAttempts: 3, shareFetches: false });
    const found = await Promise.all(Array.from({ length: 10 }, () => c.waitFor(byUid(UID), `pod ${UID}`)));
    expect(found.every((p) => p !== undefined)).toBe(true);
    expect(k.requests).toHaveLength(10);
    const errs = await Promise.all(Array.from({ length: 5 }, (_, i) => failure(c.waitFor(byUid(`missing-${i}`), `pod missing-${i}`))));
    expect(errs.map((e) => e.message)).toEqual(Array.from({ length: 5 }, (_, i) => `pod missing-${i} not found in kubelet pod list after 3 attempts`));
    expect(k.requests).toHaveLength(10 + 5 * 3);
  });

  it('a pod that appears after a delay is found by a later poll', async () => {
    const k = await kubelet();
    const c = client({ url: k.url, pollIntervalMs: 30, maxPollAttempts: 20 });
    const waiting = c.waitFor(byUid(UID), `pod ${UID}`);
    while (k.requests.length < 3) await new Promise((r) => setTimeout(r, 5));
    k.pods = [makePod({ uid: UID, name: 'late' })];
    const pod = (await waiting) as { metadata: { name: string } };
    expect(pod.metadata.name).toBe('late');
    expect(k.requests.length).toBeGreaterThanOrEqual(4);
    expect(k.requests.length).toBeLessThanOrEqual(5);
  });

  it('kubelet down: unreachable', async () => {
    const k = await kubelet();
    const url = k.url;
    await k.close();
    const fetches: string[] = [];
    const c = client({ url, onFetch: (o) => fetches.push(o) });
    const err = await failure(c.waitFor(byUid(UID), 'pod'));
    expect(err.reason).toBe('unreachable');
    expect(err.message).toMatch(/kubelet GET http:\/\/127\.0\.0\.1:\d+\/pods failed: .*ECONNREFUSED/);
    expect(fetches).toEqual(['error']);
  });

  it('kubelet slow: timeout', async () => {
    const k = await kubelet();
    k.handler = () => {}; // never answers
    const c = client({ url: k.url, timeoutMs: 150 });
    const err = await failure(c.waitFor(byUid(UID), 'pod'));
    expect(err.reason).toBe('timeout');
    expect(err.message).toMatch(/timed out after 150 ms/);
  });

  it('a body that stalls mid-way also times out', async () => {
    const k = await kubelet();
    k.handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"items": [');
    };
    const c = client({ url: k.url, timeoutMs: 150 });
    expect((await failure(c.waitFor(byUid(UID), 'pod'))).reason).toBe('timeout');
  });

  it('invalid JSON and a non-list body: invalid-response', async () => {
    const k = await kubelet();
    k.handler = (_req, res) => res.writeHead(200).end('{"items": [ oops');
    const c = client({ url: k.url });
    const err = await failure(c.waitFor(byUid(UID), 'pod'));
    expect(err.reason).toBe('invalid-response');
    expect(err.message).toMatch(/body is not JSON/);
    k.handler = (_req, res) => res.writeHead(200).end('{"items": {"a": 1}}');
    const c2 = client({ url: k.url });
    expect((await failure(c2.waitFor(byUid(UID), 'pod'))).message).toMatch(/"items" is not an array/);
    k.handler = (_req, res) => res.writeHead(200).end('[1, 2]');
    const c3 = client({ url: k.url });
    expect((await failure(c3.waitFor(byUid(UID), 'pod'))).message).toMatch(/body is not a PodList object/);
  });

  it('HTTP 500: status error with the code and body', async () => {
    const k = await kubelet();
    k.handler = (_req, res) => res.writeHead(500).end('internal error');
    const c = client({ url: k.url });
    const err = await failure(c.waitFor(byUid(UID), 'pod'));
    expect(err.reason).toBe('status');
    expect(err.message).toMatch(/answered HTTP 500: internal error/);
  });

  it('bad token: 401; missing token file: token error; a rotated token is picked up', async () => {
    const k = await kubelet();
    k.requireToken = 'good';
    k.pods = [makePod({ uid: UID })];
    const tokenFile = join(tmp, 'rotating-token');
    writeFileSync(tokenFile, 'bad');
    const c = client({ url: k.url, tokenFile, pollIntervalMs: 0 });
    expect((await failure(c.waitFor(byUid(UID), 'pod'))).message).toMatch(/HTTP 401/);
    writeFileSync(tokenFile, 'good');
    expect(await c.waitFor(byUid(UID), 'pod')).toBeDefined();
    const c2 = client({ url: k.url, tokenFile: join(tmp, 'no-such-token') });
    const err = await failure(c2.waitFor(byUid(UID), 'pod'));
    expect(err.reason).toBe('token');
    expect(err.message).toMatch(/cannot read the kubelet token file .*no-such-token/);
  });

  it('a token with a line break inside is a token error, not a crash', async () => {
    const k = await kubelet();
    const tokenFile = join(tmp, 'broken-token');
    writeFileSync(tokenFile, 'abc\ndef\n');
    const err = await failure(client({ url: k.url, tokenFile }).waitFor(byUid(UID), 'pod'));
    expect(err.reason).toBe('token');
    expect(err.message).toMatch(/cannot send the request/);
    expect(k.requests).toHaveLength(0);
  });

  it('a failed fetch does not poison the next one', async () => {
    const k = await kubelet();
    k.pods = [makePod({ uid: UID })];
    let calls = 0;
    k.handler = (_req, res) => {
      if (calls++ === 0) res.writeHead(503).end('starting');
      else res.writeHead(200).end(JSON.stringify({ items: k.pods }));
    };
    const c = client({ url: k.url, pollIntervalMs: 20 });
    expect((await failure(c.waitFor(byUid(UID), 'pod'))).reason).toBe('status');
    expect(await c.waitFor(byUid(UID), 'pod')).toBeDefined();
  });

  it('close() fails waiting callers with reason closed and is idempotent', async () => {
    const k = await kubelet();
    const c = client({ url: k.url, pollIntervalMs: 10_000, maxPollAttempts: 60 });
    const waiting = failure(c.waitFor(byUid(UID), 'pod'));
    while (k.requests.length < 1 || !c.lastList) await new Promise((r) => setTimeout(r, 5));
    c.close();
    c.close();
    expect((await waiting).reason).toBe('closed');
    expect((await failure(c.waitFor(byUid(UID), 'pod'))).reason).toBe('closed');
  });

  it('https: verifies with the CA file, refuses an unknown CA, skipVerify accepts', async () => {
    // The project's own self-signed serving certificate (no openssl needed on the machine).
    const cert = join(tmp, 'tls.crt');
    const served = await generateServingCert('127.0.0.1', 'fake-kubelet');
    writeFileSync(cert, served.certPem);
    const k = await kubelet({ key: Buffer.from(served.keyPem), cert: Buffer.from(served.certPem) });
    k.pods = [makePod({ uid: UID })];
    expect(await client({ url: k.url, caFile: cert }).waitFor(byUid(UID), 'pod')).toBeDefined();
    const err = await failure(client({ url: k.url }).waitFor(byUid(UID), 'pod'));
    expect(err.reason).toBe('unreachable');
    expect(err.message).toMatch(/self[- ]signed/i);
    expect(await client({ url: k.url, skipVerify: true }).waitFor(byUid(UID), 'pod')).toBeDefined();
  });

  it('bad options are ConfigErrors naming the key', () => {
    expect(() => createKubeletClient({ url: 'ftp://x', timeoutMs: 1, pollIntervalMs: 1, maxPollAttempts: 1 })).toThrow(
      /k8s\.kubeletUrl must use http or https, got "ftp:\/\/x"/,
    );
    expect(() =>
      createKubeletClient({ url: 'https://127.0.0.1:1', caFile: join(tmp, 'none.crt'), timeoutMs: 1, pollIntervalMs: 1, maxPollAttempts: 1 }),
    ).toThrow(ConfigError);
    expect(() => createKubeletClient({ url: 'http://x', timeoutMs: 1, pollIntervalMs: 1, maxPollAttempts: 0 })).toThrow(
      /k8s\.maxPollAttempts must be at least 1, got 0/,
    );
  });
});
