// The in-pod generator endpoint against a real reference agent on a Unix socket: readiness (with
// and without the SVID probe SPIRE variants use), the release, the seconds and the final dump.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGenerator } from '../../src/kube/index.js';
import { startTestAgent, type TestAgent } from '../agent/harness.js';

let agent: TestAgent;
beforeAll(async () => {
  agent = await startTestAgent({ attestors: ['unix'] });
});
afterAll(async () => {
  await agent?.stop();
});

const get = async (url: string, init?: RequestInit) => {
  const r = await fetch(url, init);
  return { status: r.status, body: (await r.json()) as any };
};

async function until(check: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('generator server', () => {
  it('probe against a socket nobody serves: never ready, the failure is named', async () => {
    const gen = await startGenerator({
      podName: 'gen-probe-fail',
      port: 0,
      host: '127.0.0.1',
      log: () => {},
      probe: { timeoutMs: 1500 },
      load: { socket: join(agent.dir, 'nobody.sock'), workersPerPod: 1 },
    });
    try {
      await until(async () => (await get(`${gen.url}/ready`)).body.failure !== null);
      const r = await get(`${gen.url}/ready`);
      expect(r.status).toBe(503);
      expect(r.body.failure).toMatch(/^no SVID within the probe time: UNAVAILABLE/);
      expect((await get(`${gen.url}/go-1-2`, { method: 'POST' })).status).toBe(409);
    } finally {
      await gen.close();
    }
  });

  it('probe against the real agent, release, per-second data and the final dump', async () => {
    const gen = await startGenerator({
      podName: 'gen-ok',
      port: 0,
      host: '127.0.0.1',
      log: () => {},
      probe: { timeoutMs: 20_000 },
      load: { socket: agent.socketPath, workersPerPod: 2, deadlineMs: 500 },
    });
    try {
      await until(async () => (await get(`${gen.url}/ready`)).status === 200);
      expect((await get(`${gen.url}/nope`)).status).toBe(404);
      const t0 = Date.now() + 100;
      const go = await get(`${gen.url}/go-${t0}-${t0 + 2000}`, { method: 'POST' });
      expect(go.body).toMatchObject({ released: true, ready: true });
      await gen.finished;
      const all = (await get(`${gen.url}/parts-from-0`)).body;
      expect(all.finished).toBe(true);
      expect(all.next).toBe(all.parts.length);
      expect(all.parts.length).toBeGreaterThanOrEqual(2);
      // Finished: every second it sent is complete.
      expect(all.complete).toBe(Math.max(...all.parts.map((s: any) => s.second)));
      const calls = all.parts.reduce((a: number, s: any) => a + s.counts.ok + s.counts.rateLimited + s.counts.error + s.counts.deadlineExceeded, 0);
      const final = (await get(`${gen.url}/final`)).body;
      expect(final).toMatchObject({ pod: 'gen-ok', finished: true, failure: null, parts: all.parts.length });
      expect(final.workerPids).toHaveLength(2);
      expect(final.calls).toBe(calls);
      expect(calls).toBeGreaterThan(0);
      // By index: the parts after the first, whatever seconds they belong to.
      expect((await get(`${gen.url}/parts-from-1`)).body.parts).toEqual(all.parts.slice(1));
      expect(final.client).toBe('h2');
      expect(final.clientFallback).toBeUndefined();
    } finally {
      await gen.close();
    }
  });

  it('client native in an image without a C compiler: h2 workers run, the reason is logged and in every dump', { timeout: 90_000 }, async () => {
    const lines: string[] = [];
    const saved = process.env.CC;
    // The compiler the image lacks: a name that resolves to nothing.
    process.env.CC = 'attestorm-no-such-cc';
    let gen;
    try {
      gen = await startGenerator({
        podName: 'gen-native',
        port: 0,
        host: '127.0.0.1',
        log: (l) => lines.push(l),
        load: { socket: agent.socketPath, workersPerPod: 1, client: 'native', deadlineMs: 500 },
      });
    } finally {
      if (saved === undefined) delete process.env.CC;
      else process.env.CC = saved;
    }
    try {
      await until(async () => (await get(`${gen.url}/ready`)).status === 200);
      const ready = (await get(`${gen.url}/ready`)).body;
      expect(ready.client).toBe('h2');
      expect(ready.clientFallback).toMatch(/^client native unavailable, running h2 workers instead: no C compiler: "attestorm-no-such-cc"/);
      expect(lines.map((l) => JSON.parse(l)).find((e) => e.event === 'client-fallback')).toMatchObject({ pod: 'gen-native', message: ready.clientFallback });
    } finally {
      await gen.close();
    }
  });
});
