// Files a root run writes for a user (run folders, reports, junit, the build cache in the checkout)
// are handed to that user: the sudo caller, or the owner of the folder they were written into.
import { lchownSync, lstatSync, readdirSync, type Stats } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

export interface OsOwner {
  uid: number;
  gid: number;
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

/** The topmost of path and its ancestors that does not exist yet (what writing path will create); null when path exists. */
export function firstMissing(path: string): string | null {
  let missing: string | null = null;
  for (let p = resolve(path); lstatOrNull(p) === null; p = dirname(p)) {
    missing = p;
    if (p === dirname(p)) break;
  }
  return missing;
}

/** The nearest existing one of path and its ancestors. */
export function nearestExisting(path: string): string {
  let p = resolve(path);
  while (lstatOrNull(p) === null && p !== dirname(p)) p = dirname(p);
  return p;
}

function sudoIds(env: NodeJS.ProcessEnv): OsOwner | null {
  const uid = Number(env.SUDO_UID);
  const gid = Number(env.SUDO_GID);
  if (!/^\d+$/.test(env.SUDO_UID ?? '') || !/^\d+$/.test(env.SUDO_GID ?? '') || uid === 0) return null;
  return { uid, gid };
}

/**
 * Who what root writes at or below near should belong to: the sudo caller (SUDO_UID/SUDO_GID;
 * unless sudo is false), else the owner of near (the nearest existing folder) when that is not
 * root; null when this process is not root or nobody else is concerned.
 */
export function handBackOwner(near: string, env: NodeJS.ProcessEnv = process.env, sudo = true): OsOwner | null {
  if ((process.geteuid?.() ?? -1) !== 0) return null;
  const caller = sudo ? sudoIds(env) : null;
  if (caller) return caller;
  const st = lstatOrNull(nearestExisting(near));
  return st && st.uid !== 0 ? { uid: st.uid, gid: st.gid } : null;
}

/**
 * Hands path, and everything below it that root owns, to owner: lchown only, and a symlink is
 * handed over itself but never followed, so nothing outside the tree changes owner. Files of
 * other uids (a pod's) are left as they are.
 */
export function handBackTree(path: string, owner: OsOwner | null): void {
  if (!owner) return;
  const st = lstatOrNull(path);
  if (!st || st.uid !== 0) return;
  lchownSync(path, owner.uid, owner.gid);
  if (!st.isDirectory()) return;
  let names: string[];
  try {
    names = readdirSync(path);
  } catch {
    return;
  }
  for (const name of names) handBackTree(join(path, name), owner);
}
