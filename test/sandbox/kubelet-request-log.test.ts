// The kubelet emulator's request log over real HTTP on loopback: each /pods request told once it is
// over, with arrival, answer start and end, status, bytes, queue wait and its connection; a client
// that leaves early is marked so; the latency model makes concurrent and larger answers slower.
import { request } from 'node:http';
import { Agent } from 'node:http';
import { describe, expect, it } from 'vitest';
import { modeledLatencyMs, type KubeletEmulator, type KubeletRequestRecord } from '../../src/sandbox/index.js';
import { useKubeletEmulators } from '../support/kubelet-emulators.js';

const start = useKubeletEmulators();

function get(k: KubeletEmulator, path: string, agent?: Agent, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${k.url}${path}`, { agent: agent ?? false, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

function recorded(k: KubeletEmulator): KubeletRequestRecord[] {
  const out: KubeletRequestRecord[] = [];
  k.onRequest((r) => out.push(r));
  return out;
}

describe('kubelet emulator request log', () => {
  it('tells each /pods request with its times, status, size and connection, and nothing of other paths', async () => {
    const k = await start({ podSource: () => [], fillerPods: 3, latencyMs: 30 });
    const log = recorded(k);
    const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });
    expect(await get(k, '/pods', keepAlive)).toBe(200);
    expect(await get(k, '/pods', keepAlive)).toBe(200);
    expect(await get(k, '/healthz', keepAlive)).toBe(404);
    expect(await get(k, '/pods')).toBe(200);
    keepAlive.destroy();
    expect(log).toHaveLength(3);
    const [a, b, c] = log as [KubeletRequestRecord, KubeletRequestRecord, KubeletRequestRecord];
    expect(a.status).toBe(200);
    expect(a.bytes).toBe(k.podList().bytes);
    expect(a.answerStartedAt! - a.arrivedAt).toBeGreaterThanOrEqual(29);
    expect(a.answerEndedAt!).toBeGreaterThanOrEqual(a.answerStartedAt!);
    expect(a.abandoned).toBe(false);
    // The keep-alive pair shares one connection; the third came on another.
    expect(b.conn).toBe(a.conn);
    expect(c.conn).not.toBe(a.conn);
    expect(log.every((r) => r.inFlight === 1)).toBe(true);
  });

  it('records the refused and the queued, and a client that left before its answer', async () => {
    const k = await start({ podSource: () => [], fillerPods: 1, token: 'sekret', serviceTimeMs: 60 });
    const log = recorded(k);
    expect(await get(k, '/pods')).toBe(401);
    const auth = { authorization: 'Bearer sekret' };
    await Promise.all([get(k, '/pods', undefined, auth), get(k, '/pods', undefined, auth)]);
    await new Promise<void>((resolve) => {
      const req = request(`${k.url}/pods`, { agent: false, headers: auth });
      req.on('error', () => resolve());
      req.end();
      setTimeout(() => req.destroy(), 20);
    });
    await new Promise((r) => setTimeout(r, 250));
    expect(log.map((r) => r.status)).toEqual([401, 200, 200, null]);
    const queued = log.slice(1, 3).map((r) => r.queueWaitMs);
    expect(Math.max(...queued)).toBeGreaterThanOrEqual(50);
    expect(log[2]!.inFlight).toBe(2);
    expect(log[3]).toMatchObject({ abandoned: true, answerEndedAt: null });
  });

  it('answers later under the latency model the more requests are in flight and the larger the list', async () => {
    expect(modeledLatencyMs({ baseMs: 100, perConcurrentMs: 10, perMiBMs: 50 }, 3, 2 * 2 ** 20)).toBe(230);
    const k = await start({ podSource: () => [], fillerPods: 1, latencyModel: { baseMs: 20, perConcurrentMs: 40 } });
    const log = recorded(k);
    await Promise.all([get(k, '/pods'), get(k, '/pods'), get(k, '/pods')]);
    const answer = log.map((r) => ({ inFlight: r.inFlight, ms: r.answerStartedAt! - r.arrivedAt })).sort((x, y) => x.inFlight - y.inFlight);
    expect(answer.map((a) => a.inFlight)).toEqual([1, 2, 3]);
    expect(answer[0]!.ms).toBeGreaterThanOrEqual(19);
    expect(answer[2]!.ms).toBeGreaterThanOrEqual(99);
  });
});
