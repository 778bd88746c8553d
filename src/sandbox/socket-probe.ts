// Whether the runtime folder can hold the agents' Unix sockets, proven before anything starts by a
// probe socket bound, listened on and connected to there. Some filesystems cannot hold one (9p and
// NFS roots of VMs and containers, vfat): on them every agent would exit before it was ready, the
// cause (`listen ENXIO …`) only in each agent's log.
import { rmSync, statfsSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { PreflightFailure } from '../errors.js';
import { mountOf } from '../util/index.js';
import { RUNTIME_DIR_ENV } from './runtime-dir.js';

/** statfs magic numbers of filesystems users meet, for when /proc/self/mountinfo cannot be read. */
const FS_MAGIC: Record<number, string> = {
  0x01021994: 'tmpfs',
  0xef53: 'ext2/3/4',
  0x58465342: 'xfs',
  0x9123683e: 'btrfs',
  0x794c7630: 'overlay',
  0x6969: 'nfs',
  0x01021997: '9p',
  0x4d44: 'vfat',
  0x2011bab0: 'exfat',
  0x65735546: 'fuse',
  0xff534d42: 'cifs',
  0xfe534d42: 'smb2',
  0x73717368: 'squashfs',
};

/** "a vfat filesystem (/dev/loop0 mounted at /mnt/x)", from mountinfo, else statfs, else "an unknown filesystem". */
export function describeFilesystem(dir: string, mountinfo?: string): string {
  const m = mountOf(dir, mountinfo);
  if (m) return `a ${m.fsType} filesystem (${m.source} mounted at ${m.mountPoint})`;
  try {
    const type = Number(statfsSync(dir).type);
    return `a ${FS_MAGIC[type] ?? `type 0x${type.toString(16)}`} filesystem`;
  } catch {
    return 'an unknown filesystem';
  }
}

/** Binds a socket at path, listens and connects to it: the error code that refused, or null. */
async function probeSocket(path: string, timeoutMs: number): Promise<string | null> {
  const server = createServer((c) => c.destroy());
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, resolve);
    });
    await new Promise<void>((resolve, reject) => {
      const c = connect(path);
      const timer = setTimeout(() => reject(Object.assign(new Error('connect timed out'), { code: 'ETIMEDOUT' })), timeoutMs);
      c.once('connect', () => {
        clearTimeout(timer);
        c.destroy();
        resolve();
      });
      c.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
    return null;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    return `${e.syscall ?? 'listen'} ${e.code ?? e.message}`;
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    // A filesystem that refused may still have made a file by the name (fusefat makes a regular one).
    rmSync(path, { force: true });
  }
}

/**
 * Null when `base` (the checked runtime folder) holds a Unix socket; else the failure naming the
 * filesystem it is on and ATTESTORM_TMPDIR.
 */
export async function runtimeSocketFailure(base: string, timeoutMs = 5_000): Promise<PreflightFailure | null> {
  const refused = await probeSocket(join(base, `.socket-probe-${process.pid}`), timeoutMs);
  if (refused === null) return null;
  return new PreflightFailure(
    'ATTESTORM_ERR_RUNTIME_DIR_SOCKETS',
    `the runtime folder ${base} cannot hold the agents' Unix sockets: a probe socket there failed (${refused}); it is on ${describeFilesystem(base)}`,
    `set ${RUNTIME_DIR_ENV} to a folder of your own on a filesystem that holds sockets (tmpfs, ext4, xfs), e.g. ${RUNTIME_DIR_ENV}=/dev/shm/attestorm`,
  );
}
