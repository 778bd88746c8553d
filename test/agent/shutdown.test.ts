// Graceful drain: close() stops accepting and removes the socket at once, ends watch streams with
// OK, lets a call that is mid-attestation finish with its answer, then resolves.
import { existsSync, rmSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, describe, expect, it } from 'vitest';
import { startFakeKubelet, type FakeKubelet } from './fake-kubelet.js';
import { fakeProcRoot, header, newClient, podCgroup, startTestAgent, tempDir, unary } from './harness.js';

const POD = '11111111-2222-3333-4444-555555555555';
const CID = 'c'.repeat(64);

describe('agent.close()', () => {
  let kubelet: FakeKubelet | undefined;
  const dir = tempDir();
  afterAll(async () => {
    await kubelet?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('ends streams with OK, finishes the in-flight call, refuses new connections, removes the socket', async () => {
    kubelet = await startFakeKubelet();
    kubelet.pods = [
      {
        metadata: { name: 'api', namespace: 'drain', uid: POD },
        spec: { serviceAccountName: 'api', nodeName: 'n1' },
        status: { containerStatuses: [{ name: 'main', image: 'busybox', containerID: `containerd://${CID}` }] },
      },
    ];
    const held: ServerResponse[] = [];
    const socket = join(dir, 'agent.sock');
    const t = await startTestAgent({
      socket,
      procRoot: fakeProcRoot(dir, { [process.pid]: podCgroup(POD, CID) }),
      attestors: ['unix', 'k8s'],
      k8s: { kubeletUrl: kubelet.url, timeout: '30s', pollInterval: '10ms', maxPollAttempts: 2 },
    });
    const c = t.client();

    // A watch stream, open and delivered.
    const stream = c.FetchX509Bundles({}, header());
    const streamStatus = new Promise<number>((resolve) => stream.on('status', (s: grpc.StatusObject) => resolve(s.code)));
    stream.on('error', () => {});
    await new Promise<void>((resolve) => stream.once('data', () => resolve()));

    // A call parked in attestation: the kubelet holds its answer. Its attestation must fetch anew:
    // a list fetched less than a poll interval (10 ms) before — the stream's — would be reused.
    const defaultHandler = kubelet.handler;
    kubelet.handler = (_req, res) => void held.push(res);
    await new Promise((r) => setTimeout(r, 50));
    const inflight = unary<object, { svids: { spiffe_id: string }[] }>(c, 'FetchJWTSVID', { audience: ['a'] });
    for (let i = 0; i < 500 && held.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(held.length).toBe(1);

    let closed = false;
    const closing = t.agent.close().then(() => (closed = true));
    expect(await streamStatus).toBe(grpc.status.OK);
    await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(socket)).toBe(false);
    expect(closed).toBe(false); // still waiting for the in-flight call

    const late = newClient(socket);
    const refused = await unary(late, 'FetchJWTSVID', { audience: ['a'] }, header(), { deadline: Date.now() + 2000 }).then(
      () => null,
      (e: grpc.ServiceError) => e.code,
    );
    late.close();
    expect(refused).toBe(grpc.status.UNAVAILABLE);

    kubelet.handler = defaultHandler;
    for (const res of held) res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ items: kubelet.pods }));
    const res = await inflight;
    expect(res.svids.map((s) => s.spiffe_id)).toEqual(['spiffe://example.org/ns/drain/sa/api']);
    await closing;
    expect(closed).toBe(true);
    await t.stop();
  });
});
