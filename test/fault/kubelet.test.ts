// Kubelet faults on the real emulator over real HTTP on loopback: extra latency, HTTP 500s, down
// (connection refused on the same port) and stall (accepted, never answered) — each switched on,
// seen by a real request, switched off and recovered; stalled connections destroyed on clear and close.
import { createServer, request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startKubeletEmulator, type KubeletEmulator } from '../../src/sandbox/index.js';

const open: KubeletEmulator[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((k) => k.close()));
});

async function start(): Promise<KubeletEmulator> {
  const k = await startKubeletEmulator({ podSource: () => [], fillerPods: 3 });
  open.push(k);
  return k;
}

type Outcome = { status: number; ms: number } | { error: string; ms: number } | { timeout: true };

/** One GET /pods on a fresh connection (no keep-alive), with a client-side timeout. */
function getPods(k: KubeletEmulator, timeoutMs = 2000): Promise<Outcome> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = request(`${k.url}/pods`, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, ms: performance.now() - t0 }));
    });
    req.setTimeout(timeoutMs, () => {
      resolve({ timeout: true });
      req.destroy();
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message, ms: performance.now() - t0 }));
    req.end();
  });
}

describe('kubelet emulator faults', () => {
  it('extra latency delays answers and clears', async () => {
    const k = await start();
    k.faults.setExtraLatency(300);
    const slow = await getPods(k);
    expect(slow).toMatchObject({ status: 200 });
    // The emulator's timer fired no earlier than the latency (a lower bound, not a speed assertion).
    expect((slow as { ms: number }).ms).toBeGreaterThanOrEqual(295);
    k.faults.setExtraLatency(0);
    expect(k.faults.faultState().extraLatencyMs).toBe(0);
    expect(await getPods(k)).toMatchObject({ status: 200 });
  });

  it('an error rate of 1 answers every request with HTTP 500, null restores the configured rate', async () => {
    const k = await start();
    k.faults.setErrorRate(1);
    const during = await Promise.all([1, 2, 3, 4].map(() => getPods(k)));
    expect(during.map((o) => (o as { status: number }).status)).toEqual([500, 500, 500, 500]);
    expect(k.stats().failures).toBe(4);
    k.faults.setErrorRate(null);
    expect(await getPods(k)).toMatchObject({ status: 200 });
    expect(() => k.faults.setErrorRate(1.5)).toThrow(/0\.\.1, got 1\.5/);
  });

  it('down refuses connections on the same port; up serves again there', async () => {
    const k = await start();
    const port = k.port;
    await k.faults.goDown();
    expect(await getPods(k)).toMatchObject({ error: 'ECONNREFUSED' });
    expect(k.faults.faultState().down).toBe(true);
    await k.faults.comeUp();
    expect(k.port).toBe(port);
    expect(await getPods(k)).toMatchObject({ status: 200 });
    // Close while down resolves too (nothing listening to close).
    await k.faults.goDown();
    await k.close();
  });

  it('coming up on a port taken meanwhile fails with the address, and close still resolves', async () => {
    const k = await start();
    await k.faults.goDown();
    const squatter = createServer();
    await new Promise<void>((r) => squatter.listen(k.port, '127.0.0.1', r));
    await expect(k.faults.comeUp()).rejects.toThrow(`kubelet emulator cannot listen again on 127.0.0.1:${k.port}: listen EADDRINUSE`);
    expect(k.faults.faultState().down).toBe(true);
    await k.close();
    await new Promise((r) => squatter.close(r));
  });

  it('stall accepts and never answers; clearing destroys the held connections, then it answers again', async () => {
    const k = await start();
    k.faults.setStall(true);
    const held = getPods(k, 10_000);
    // The request reached the emulator (counted) and is held without an answer.
    for (let i = 0; i < 100 && k.stats().stalled === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(k.stats().stalled).toBe(1);
    expect(await getPods(k, 300)).toEqual({ timeout: true });
    await k.faults.clearFaults();
    // The held request ends with a reset, not an answer and not our 10 s timeout.
    expect(await held).toMatchObject({ error: 'ECONNRESET' });
    expect(await getPods(k)).toMatchObject({ status: 200 });
    expect(k.faults.faultState()).toEqual({ extraLatencyMs: 0, errorRate: null, down: false, stalled: false });
  });

  it('close destroys stalled connections', async () => {
    const k = await start();
    k.faults.setStall(true);
    const held = getPods(k, 10_000);
    for (let i = 0; i < 100 && k.stats().stalled === 0; i++) await new Promise((r) => setTimeout(r, 10));
    await k.close();
    expect(await held).toMatchObject({ error: 'ECONNRESET' });
  });

  it('clearFaults ends every fault at once', async () => {
    const k = await start();
    k.faults.setExtraLatency(5000);
    k.faults.setErrorRate(1);
    await k.faults.goDown();
    await k.faults.clearFaults();
    expect(await getPods(k)).toMatchObject({ status: 200 });
  });
});
