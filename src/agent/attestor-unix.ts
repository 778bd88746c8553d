// The unix attestor: selectors from the caller's /proc/<pid>/status (uid, gid, groups and their
// names), optionally the executable's path and SHA-256 — the latter reads the whole binary per call.
import { createHash } from 'node:crypto';
import { createReadStream, readFileSync } from 'node:fs';
import { readlink, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { AttestationError, type AttestorDeps } from './attestation-error.js';
import type { AgentConfig } from './config.js';
import { exePath, readStatusSync } from './procfs.js';
import type { Attestor, CallerCreds, Selector } from './types.js';

export interface UnixAttestorOptions {
  procRoot: string;
  etcDir: string;
  workloadPath: boolean;
  workloadSha256: boolean;
  maxExeBytes: number;
}

/** id → name from an /etc/passwd- or /etc/group-style file (name:x:id:...); empty if unreadable. */
export function readIdNames(path: string): Map<number, string> {
  const names = new Map<number, string>();
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return names;
  }
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const f = line.split(':');
    const id = Number(f[2]);
    // The first entry for an id wins, as with getpwuid(3).
    if (f[0] && f[2] !== '' && Number.isInteger(id) && !names.has(id)) names.set(id, f[0]);
  }
  return names;
}

async function sha256File(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}

export function createUnixAttestorWith(opts: UnixAttestorOptions): Attestor {
  // Read once: the files change rarely and re-reading them on every call would be the attestor's
  // largest cost after the binary hash. Lazily, so an agent that never attests never reads them.
  let users: Map<number, string> | undefined;
  let groups: Map<number, string> | undefined;
  const userName = (id: number) => (users ??= readIdNames(join(opts.etcDir, 'passwd'))).get(id);
  const groupName = (id: number) => (groups ??= readIdNames(join(opts.etcDir, 'group'))).get(id);

  async function exeSelectors(pid: number, out: Selector[]): Promise<void> {
    const exe = exePath(opts.procRoot, pid);
    if (opts.workloadPath) {
      try {
        out.push({ type: 'unix', value: `path:${await readlink(exe)}` });
      } catch (err) {
        throw new AttestationError('unix', 'process-gone', `cannot read the executable link ${exe}: ${(err as Error).message}`, { cause: err });
      }
    }
    if (opts.workloadSha256) {
      let size: number;
      try {
        size = (await stat(exe)).size;
      } catch (err) {
        throw new AttestationError('unix', 'process-gone', `cannot stat the executable ${exe}: ${(err as Error).message}`, { cause: err });
      }
      if (size > opts.maxExeBytes) {
        throw new AttestationError('unix', 'exe-too-large', `executable ${exe} is ${size} bytes, above unix.maxExeBytes (${opts.maxExeBytes}); not hashed`);
      }
      try {
        // Opened through /proc/<pid>/exe, not the resolved path: that is the binary the process
        // runs even if the file on disk was replaced or deleted.
        out.push({ type: 'unix', value: `sha256:${await sha256File(exe)}` });
      } catch (err) {
        throw new AttestationError('unix', 'process-gone', `cannot hash the executable ${exe}: ${(err as Error).message}`, { cause: err });
      }
    }
  }

  return {
    name: 'unix',
    async attest(caller: CallerCreds): Promise<Selector[]> {
      let status;
      try {
        // Synchronous: procfs is in memory, and an async read's four thread-pool round trips were
        // the largest cost of an admitted call in profiles.
        status = readStatusSync(opts.procRoot, caller.pid);
      } catch (err) {
        throw new AttestationError('unix', 'process-gone', `cannot read status of pid ${caller.pid}: ${(err as Error).message}`, { cause: err });
      }
      const out: Selector[] = [{ type: 'unix', value: `uid:${status.uid}` }];
      const user = userName(status.uid);
      if (user !== undefined) out.push({ type: 'unix', value: `user:${user}` });
      out.push({ type: 'unix', value: `gid:${status.gid}` });
      const group = groupName(status.gid);
      if (group !== undefined) out.push({ type: 'unix', value: `group:${group}` });
      for (const gid of status.supplementaryGids) {
        out.push({ type: 'unix', value: `supplementary_gid:${gid}` });
        const name = groupName(gid);
        if (name !== undefined) out.push({ type: 'unix', value: `supplementary_group:${name}` });
      }
      if (opts.workloadPath || opts.workloadSha256) await exeSelectors(caller.pid, out);
      return out;
    },
  };
}

export function createUnixAttestor(cfg: AgentConfig, deps: AttestorDeps): Attestor {
  return createUnixAttestorWith({
    procRoot: cfg.procRoot,
    etcDir: deps.etcDir ?? '/etc',
    workloadPath: cfg.unix.workloadPath,
    workloadSha256: cfg.unix.workloadSha256,
    maxExeBytes: cfg.unix.maxExeBytes,
  });
}
