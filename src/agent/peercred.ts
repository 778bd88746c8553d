// SO_PEERCRED for accepted Unix-socket connections: the kernel's word on who connected (pid, uid,
// gid), read through libc's getsockopt via koffi because Node exposes no API for it.
import type { Socket } from 'node:net';
import { createRequire } from 'node:module';
import { PlatformError } from '../errors.js';

export interface PeerCred {
  pid: number;
  uid: number;
  gid: number;
}

/** Reads the peer credentials of a connected Unix socket. */
export type PeerCredReader = (socket: Socket) => PeerCred;

const SOL_SOCKET = 1;
const SO_PEERCRED = 17;
const UCRED_SIZE = 12; // struct ucred { pid_t pid; uid_t uid; gid_t gid; } on Linux

let cached: PeerCredReader | undefined;

/**
 * Binds getsockopt once. Throws PlatformError where SO_PEERCRED does not exist (not Linux) or libc
 * cannot be loaded, so the agent refuses to start rather than serving callers it cannot identify.
 */
export function createPeerCredReader(): PeerCredReader {
  if (cached) return cached;
  if (process.platform !== 'linux') {
    throw new PlatformError(`SO_PEERCRED is Linux-only and this is ${process.platform}: the agent cannot learn who calls it, so it does not start`);
  }
  type Koffi = typeof import('koffi');
  let koffi: Koffi;
  let getsockopt: (fd: number, level: number, name: number, out: Buffer, len: Buffer) => number;
  try {
    // koffi is a native addon; required lazily so platforms without it fail here with a clear message.
    koffi = createRequire(import.meta.url)('koffi') as Koffi;
    const libc = koffi.load('libc.so.6');
    // Raw buffers rather than a koffi struct: no object is decoded per call on the accept path.
    getsockopt = libc.func('int getsockopt(int fd, int level, int optname, void *optval, void *optlen)') as typeof getsockopt;
  } catch (err) {
    throw new PlatformError(`cannot bind getsockopt(SO_PEERCRED) through koffi/libc.so.6 (${(err as Error).message}); the agent needs it to identify callers`, {
      cause: err,
    });
  }
  // struct ucred and its length, reused: the agent's event loop reads one socket at a time.
  const ucred = Buffer.alloc(UCRED_SIZE);
  const len = Buffer.alloc(4);
  cached = (socket: Socket): PeerCred => {
    const fd = (socket as unknown as { _handle?: { fd?: number } })._handle?.fd;
    if (typeof fd !== 'number' || fd < 0) throw new Error('socket has no file descriptor (already closed?)');
    len.writeUInt32LE(UCRED_SIZE, 0);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, ucred, len) !== 0) {
      throw new Error(`getsockopt(SO_PEERCRED) failed: errno ${koffi.errno()}`);
    }
    if (len.readUInt32LE(0) !== UCRED_SIZE) throw new Error(`getsockopt(SO_PEERCRED) returned ${len.readUInt32LE(0)} bytes, expected ${UCRED_SIZE}`);
    return { pid: ucred.readInt32LE(0), uid: ucred.readUInt32LE(4), gid: ucred.readUInt32LE(8) };
  };
  return cached;
}
