// Slow clients (slowloris): real connections to the agent's Unix socket that send only the first
// bytes of the HTTP/2 connection preface and then nothing, held for the window and closed at its end.
import { connect, type Socket } from 'node:net';
import type { FaultStarter } from './action.js';

/** The first bytes of "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n": the server waits for the rest. */
const PARTIAL_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n');
/** Connections opened at once: beyond the listen backlog a Unix socket refuses (EAGAIN). */
const CONNECT_BATCH = 64;

export interface SlowClientCounts {
  /** Connections that completed the connect. */
  opened: number;
  /** Of those, closed by the server before we closed them. */
  closedByPeer: number;
  /** Connects that failed (refused, backlog full, no such socket). */
  failed: number;
  /** Open now. */
  open: number;
}

export interface SlowClients {
  counts(): SlowClientCounts;
  /** Destroys every connection still open; resolves with the counts as they were just before. */
  close(): Promise<SlowClientCounts>;
}

function openOne(path: string, sockets: Set<Socket>, counts: Omit<SlowClientCounts, 'open'>, closing: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const sock = connect({ path });
    let connected = false;
    sock.on('connect', () => {
      connected = true;
      counts.opened++;
      sockets.add(sock);
      sock.write(PARTIAL_PREFACE);
      resolve();
    });
    // Whatever the server sends is read and dropped; its errors end the connection like a close.
    sock.on('data', () => {});
    sock.on('error', () => {});
    sock.on('close', () => {
      sockets.delete(sock);
      if (!connected) {
        counts.failed++;
        resolve();
      } else if (!closing()) {
        counts.closedByPeer++;
      }
    });
  });
}

/** Opens `count` slow connections to the Unix socket at `path`; resolves once every connect has settled. */
export async function openSlowClients(path: string, count: number): Promise<SlowClients> {
  const sockets = new Set<Socket>();
  const counts = { opened: 0, closedByPeer: 0, failed: 0 };
  let closing = false;
  for (let i = 0; i < count; i += CONNECT_BATCH) {
    const batch: Promise<void>[] = [];
    for (let j = i; j < Math.min(count, i + CONNECT_BATCH); j++) batch.push(openOne(path, sockets, counts, () => closing));
    await Promise.all(batch);
  }
  const snapshot = () => ({ ...counts, open: sockets.size });
  return {
    counts: snapshot,
    async close() {
      const before = snapshot();
      closing = true;
      const closed = [...sockets].map((s) => new Promise<void>((r) => (s.destroyed ? r() : (s.once('close', () => r()), s.destroy()))));
      await Promise.all(closed);
      return before;
    },
  };
}

export const slowClients: FaultStarter<'slow-clients'> = async (f, target) => {
  const clients = await openSlowClients(target.socket, f.count);
  const c = clients.counts();
  return {
    detail: `${c.open} slow connections held open on the agent's socket (partial HTTP/2 preface)${c.failed ? `, ${c.failed} failed to connect` : ''}`,
    end: async () => {
      const e = await clients.close();
      return `closed ${e.open} slow connections${e.closedByPeer ? `; the agent had closed ${e.closedByPeer} itself` : ''}`;
    },
  };
};
