// Slow clients against real Unix sockets: a plain server sees each connection send only the start of
// the HTTP/2 preface and nothing more, held until the window closes them; the real reference agent
// keeps answering a real probe call while they are held; failures and server-side closes are counted.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openSlowClients, probeAgentOnce, waitAgentAnswers } from '../../src/fault/index.js';
import { startTestAgent } from '../agent/harness.js';

const dir = mkdtempSync(join(tmpdir(), 'attestorm-slow-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function server(name: string, onConn: (s: Socket) => void = () => {}): Promise<{ srv: Server; path: string; conns: Socket[]; bytes: Buffer[] }> {
  const path = join(dir, name);
  const conns: Socket[] = [];
  const bytes: Buffer[] = [];
  const srv = createServer((s) => {
    const i = conns.push(s) - 1;
    bytes[i] = Buffer.alloc(0);
    s.on('data', (d) => (bytes[i] = Buffer.concat([bytes[i]!, d])));
    s.on('error', () => {});
    onConn(s);
  });
  await new Promise<void>((r) => srv.listen(path, r));
  return { srv, path, conns, bytes };
}

describe('slow clients', () => {
  it('hold connections that send only the start of the HTTP/2 preface, and close them all', async () => {
    const { srv, path, conns, bytes } = await server('plain.sock');
    const clients = await openSlowClients(path, 30);
    expect(clients.counts()).toEqual({ opened: 30, closedByPeer: 0, failed: 0, open: 30 });
    await sleep(100);
    expect(conns).toHaveLength(30);
    // Each sent the preface's first line and stopped: never the full 24-byte preface.
    expect(bytes.map((b) => b.toString())).toEqual(Array(30).fill('PRI * HTTP/2.0\r\n'));
    expect(conns.every((s) => !s.destroyed)).toBe(true);
    const before = await clients.close();
    expect(before.open).toBe(30);
    await sleep(100);
    expect(conns.every((s) => s.destroyed)).toBe(true);
    expect(clients.counts().open).toBe(0);
    srv.close();
  });

  it('count connects that fail and connections the server closes', async () => {
    const none = await openSlowClients(join(dir, 'nothing.sock'), 5);
    expect(none.counts()).toEqual({ opened: 0, closedByPeer: 0, failed: 5, open: 0 });
    const { srv, path } = await server('closer.sock', (s) => setTimeout(() => s.destroy(), 20));
    const clients = await openSlowClients(path, 4);
    await sleep(200);
    expect(clients.counts()).toMatchObject({ opened: 4, closedByPeer: 4, open: 0 });
    await clients.close();
    srv.close();
  });

  it('against the real agent: held while the agent still answers a real call, then closed', async () => {
    const agent = await startTestAgent({ attestors: ['unix'] });
    try {
      const clients = await openSlowClients(agent.socketPath, 50);
      expect(clients.counts()).toMatchObject({ opened: 50, failed: 0 });
      expect(await probeAgentOnce(agent.socketPath)).toBe(true);
      await sleep(200);
      // The agent did not drop them within the window.
      expect(clients.counts().open).toBe(50);
      expect((await clients.close()).open).toBe(50);
      await waitAgentAnswers(agent.socketPath, AbortSignal.timeout(5000));
    } finally {
      await agent.stop();
    }
    // Nobody listens any more: no answer, and the wait gives up when its signal aborts.
    expect(await probeAgentOnce(agent.socketPath, 500)).toBe(false);
    await expect(waitAgentAnswers(agent.socketPath, AbortSignal.timeout(300))).rejects.toThrow();
  });
});
