// Whether a process running as another OS user can reach a file: pods with a uid of their own
// (per-pod uids, bystanders with uid "own") start node on a bundle, and a checkout below a
// 0700 folder (a home directory, a mktemp -d) is closed to them.
import { existsSync, realpathSync, statSync, type Stats } from 'node:fs';
import { dirname } from 'node:path';
import { UID_BASES } from './options.js';

export interface OsIds {
  uid: number;
  gid: number;
}

/** The permission bits (r=4, w=2, x=1) that apply to ids for a file with these stats (no supplementary groups). */
function bitsFor(st: Stats, ids: OsIds): number {
  if (st.uid === ids.uid) return (st.mode >> 6) & 7;
  if (st.gid === ids.gid) return (st.mode >> 3) & 7;
  return st.mode & 7;
}

function describe(path: string, st: Stats): string {
  return `${path} is mode ${(st.mode & 0o7777).toString(8).padStart(4, '0')} (owner uid ${st.uid}, gid ${st.gid})`;
}

/** Each folder from / down to path's parent, for the path as written and as resolved. */
function foldersOf(path: string): string[] {
  const out: string[] = [];
  for (const p of new Set([path, safeRealpath(path)])) {
    for (let d = dirname(p); ; d = dirname(d)) {
      out.push(d);
      if (d === dirname(d)) break;
    }
  }
  return [...new Set(out)];
}

function safeRealpath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * Why a process as ids cannot reach path — "<folder> is mode 0700 (owner uid 0, gid 0)" — or
 * null when it can: every folder on the way searchable, the file itself readable (and executable
 * with need "exec"; a folder: searchable). Root reaches everything.
 */
export function unreachableFor(path: string, ids: OsIds, need: 'read' | 'exec' = 'read'): string | null {
  if (ids.uid === 0) return null;
  for (const dir of foldersOf(path)) {
    let st: Stats;
    try {
      st = statSync(dir);
    } catch {
      return `${dir} does not exist`;
    }
    if ((bitsFor(st, ids) & 1) === 0) return describe(dir, st);
  }
  let st: Stats;
  try {
    st = statSync(path);
  } catch {
    return `${path} does not exist`;
  }
  const want = st.isDirectory() ? 1 : need === 'exec' ? 5 : 4;
  return (bitsFor(st, ids) & want) === want ? null : describe(path, st);
}

export interface PodUidSettings {
  uidMode: 'same' | 'per-pod';
  bystandersUid?: 'same' | 'own' | undefined;
}

/**
 * The first uid that pods with these settings run as other than this process's, and the setting
 * that makes them do so (for messages); null when every pod runs as this process's uid.
 */
export function otherPodIds(s: PodUidSettings): { ids: OsIds; setting: string } | null {
  if (s.uidMode === 'per-pod') return { ids: { uid: UID_BASES.perPod, gid: UID_BASES.perPod }, setting: 'uidMode "per-pod"' };
  if (s.bystandersUid === 'own') return { ids: { uid: UID_BASES.bystander, gid: UID_BASES.bystander }, setting: 'bystanders.uid "own"' };
  return null;
}

/**
 * What keeps pods that run as another uid from starting: node itself (process.execPath) and the
 * run's temp folder (where the pods' bundles are copied when the checkout is closed to them) must
 * be reachable (a folder not made yet: its nearest existing parent). A sentence naming the setting,
 * the uid, the path and its mode; null when none.
 */
export function podUidProblem(s: PodUidSettings, tempDir: string): string | null {
  const other = otherPodIds(s);
  if (!other) return null;
  const { ids, setting } = other;
  const node = unreachableFor(process.execPath, ids, 'exec');
  if (node)
    return `${setting}: pod processes run as uid ${ids.uid}, which cannot start node (${process.execPath}): ${node}; install node where every user can run it, or run these pods as this process's uid`;
  let existing = tempDir;
  while (!existsSync(existing) && existing !== dirname(existing)) existing = dirname(existing);
  const temp = unreachableFor(existing, ids);
  if (temp)
    return `${setting}: pod processes run as uid ${ids.uid}, which cannot reach the run's temp folder ${tempDir}: ${temp}; set ATTESTORM_TMPDIR to a folder of yours below folders every user can enter`;
  return null;
}
