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
    throw new PlatformError(
      `SO_PEERCRED is Linux-only and this is ${process.platform}: the agent cannot learn who calls it, so it does not start`,
    );
  }
  type Koffi = typeof import('koffi');
  let koffi: Koffi;
  let getsockopt: (fd: number, level: number, name: number, out: Record<string, number>, len: number[]) => number;
  try {
    // koffi is a native addon; required lazily so platforms without it fail here with a clear message.
    koffi = createRequire(import.meta.url)('koffi') as Koffi;
    const libc = koffi.load('libc.so.6');
    koffi.struct('attestorm_ucred', { pid: 'int32', uid: 'uint32', gid: 'uint32' });
    getsockopt = libc.func(
      'int getsockopt(int fd, int level, int optname, _Out_ attestorm_ucred *optval, _Inout_ uint32_t *optlen)',
    ) as typeof getsockopt;
  } catch (err) {
    throw new PlatformError(
      `cannot bind getsockopt(SO_PEERCRED) through koffi/libc.so.6 (${(err as Error).message}); the agent needs it to identify callers`,
      { cause: err },
    );
  }
  cached = (socket: Socket): PeerCred => {
    const fd = (socket as unknown as { _handle?: { fd?: number } })._handle?.fd;
    if (typeof fd !== 'number' || fd < 0) throw new Error('socket has no file descriptor (already closed?)');
    const out: Record<string, number> = {};
    const len = [UCRED_SIZE];
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, out, len) !== 0) {
      throw new Error(`getsockopt(SO_PEERCRED) failed: errno ${koffi.errno()}`);
    }
    return { pid: out.pid!, uid: out.uid!, gid: out.gid! };
  };
  return cached;
}
