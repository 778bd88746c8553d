// The Workload API's listener. The agent accepts Unix-socket connections itself so it can ask the
// kernel who connected (SO_PEERCRED) and note the caller's start time before any byte is read,
// then hands each socket to grpc-js through a connection injector.
//
// How a call finds its connection's credentials: grpc-js builds call.getPeer() from the session
// socket's remoteAddress, which a Unix socket does not have. Each accepted socket gets an own
// remoteAddress property holding a unique tag ("uds-conn:<n>"), and the tag maps to the creds
// until the socket closes. No grpc-js internals are touched.
//
// Per-connection memory: requests are tiny, so the receive limit is 64 KiB (not grpc-js's 4 MiB),
// and channelz is off (it keeps per-socket trace objects). Node's http2 session and socket buffers
// otherwise keep their defaults (measured: about 60 KiB of agent RSS per idle connection that has
// made one call); the brief's 32 KiB → 4 KiB read-buffer effect is a Go-agent knob with no exact
// Node counterpart, since libuv reads into a transient buffer rather than one per connection.
import { readFileSync, unlinkSync } from 'node:fs';
import { chmod, lstat, mkdir, unlink } from 'node:fs/promises';
import { connect, createServer, type Server as NetServer, type Socket } from 'node:net';
import { dirname } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { ConfigError } from '../errors.js';
import type { AgentMetrics } from './metrics.js';
import type { PeerCredReader } from './peercred.js';
import { readStartTimeSync } from './procfs.js';
import type { CallerCreds } from './types.js';

export const MAX_RECEIVE_MESSAGE_BYTES = 64 * 1024;

export interface WorkloadServerOptions {
  socketPath: string;
  procRoot: string;
  metrics: AgentMetrics;
  peerCred: PeerCredReader;
  log?: (message: string) => void;
}

export interface WorkloadServer {
  /** Register services here before listen(). */
  readonly grpc: grpc.Server;
  /** The creds of the connection whose call.getPeer() is `peer`; undefined once it has closed. */
  callerOf(peer: string): CallerCreds | undefined;
  openConnections(): number;
  /** Creates the parent directory, removes a stale socket file, listens. */
  listen(): Promise<void>;
  /** Stops accepting, removes the socket file, lets in-flight calls finish for up to graceMs. */
  close(graceMs: number): Promise<void>;
  /** Drops everything now. */
  destroy(): void;
}

const TAG_PREFIX = 'uds-conn:';

export function createWorkloadServer(opts: WorkloadServerOptions): WorkloadServer {
  const { socketPath, procRoot, metrics, peerCred } = opts;
  const log = opts.log ?? (() => {});
  const server = new grpc.Server({
    'grpc.max_receive_message_length': MAX_RECEIVE_MESSAGE_BYTES,
    'grpc.enable_channelz': 0,
  });
  const injector = server.createConnectionInjector(grpc.ServerCredentials.createInsecure());
  const creds = new Map<string, CallerCreds>();
  const sockets = new Set<Socket>();
  let nextId = 0;
  let netServer: NetServer | undefined;
  let closing: Promise<void> | undefined;
  let socketFileOwned = false;

  function accept(socket: Socket): void {
    sockets.add(socket);
    metrics.connectionOpened();
    const tag = `${TAG_PREFIX}${++nextId}`;
    socket.once('close', () => {
      sockets.delete(socket);
      creds.delete(tag);
      metrics.connectionClosed();
    });
    // Until http2 takes the socket, a reset by an impatient client must not become an uncaught error.
    socket.on('error', () => {});
    let cred;
    try {
      cred = peerCred(socket);
    } catch (err) {
      log(`dropping a connection whose peer credentials cannot be read: ${(err as Error).message}`);
      socket.destroy();
      return;
    }
    const startTime = readStartTimeSync(procRoot, cred.pid);
    if (closing) {
      socket.destroy();
      return;
    }
    creds.set(tag, { pid: cred.pid, uid: cred.uid, gid: cred.gid, startTime });
    Object.defineProperty(socket, 'remoteAddress', { value: tag, configurable: true, enumerable: false });
    injector.injectConnection(socket);
  }

  async function removeSocketFile(): Promise<void> {
    if (!socketFileOwned) return;
    socketFileOwned = false;
    await unlink(socketPath).catch(() => {});
  }

  return {
    grpc: server,
    callerOf: (peer) => creds.get(peer),
    openConnections: () => sockets.size,

    async listen() {
      await mkdir(dirname(socketPath), { recursive: true });
      await removeStaleSocket(socketPath);
      netServer = await listenUnix(socketPath, accept, log);
      socketFileOwned = true;
      // Like SPIRE's agent: any local uid may connect (pods run as many uids); the agent tells them
      // apart by SO_PEERCRED, not by file permissions.
      await chmod(socketPath, 0o777);
    },

    close(graceMs) {
      closing ??= (async () => {
        netServer?.close();
        await removeSocketFile();
        await shutdownWithin(server, graceMs);
        for (const s of sockets) s.destroy();
        creds.clear();
      })();
      return closing;
    },

    destroy() {
      closing ??= Promise.resolve();
      netServer?.close();
      server.forceShutdown();
      for (const s of sockets) s.destroy();
      creds.clear();
      if (socketFileOwned) {
        socketFileOwned = false;
        try {
          // Synchronous on purpose: destroy() runs from exit paths where a promise may never settle.
          unlinkSync(socketPath);
        } catch {
          /* already gone */
        }
      }
    },
  };
}

/** A socket file left by an earlier agent is removed; a live one, or a file that is no socket, is an error. */
async function removeStaleSocket(socketPath: string): Promise<void> {
  let st;
  try {
    st = await lstat(socketPath);
  } catch {
    return;
  }
  if (!st.isSocket()) {
    throw new ConfigError(`socket ${socketPath} exists and is not a Unix socket; refusing to replace it`);
  }
  const live = await new Promise<boolean>((resolve) => {
    const probe = connect(socketPath);
    probe.once('connect', () => (probe.destroy(), resolve(true)));
    probe.once('error', () => resolve(false));
  });
  if (live) throw new ConfigError(`socket ${socketPath} is in use by another process; stop it or choose another --socket`);
  await unlink(socketPath).catch(() => {});
}

/**
 * The listen backlog: the kernel's somaxconn, as Go's net package (and so SPIRE's agent) uses.
 * Node's default of 511 made a busy reference agent refuse connections (EAGAIN, seen by clients as
 * UNAVAILABLE within a millisecond) where SPIRE queues them, which shed a storm's load before any
 * attestation and hid the memory growth the harness is there to measure.
 */
export function listenBacklog(read: () => string = () => readFileSync('/proc/sys/net/core/somaxconn', 'utf8')): number {
  try {
    const n = Number.parseInt(read().trim(), 10);
    if (Number.isSafeInteger(n) && n > 0) return n;
  } catch {
    /* no procfs: Node's own default */
  }
  return 511;
}

/** Listens on the Unix socket; errors after the listen are logged, not thrown. */
async function listenUnix(socketPath: string, accept: (socket: Socket) => void, log: (m: string) => void): Promise<NetServer> {
  const ns = createServer(accept);
  await new Promise<void>((resolve, reject) => {
    ns.once('error', reject);
    ns.listen({ path: socketPath, backlog: listenBacklog() }, () => {
      ns.off('error', reject);
      resolve();
    });
  });
  ns.on('error', (err) => log(`listener error: ${err.message}`));
  return ns;
}

/** Lets in-flight calls finish for up to graceMs, then cuts them. */
function shutdownWithin(server: grpc.Server, graceMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, graceMs);
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
