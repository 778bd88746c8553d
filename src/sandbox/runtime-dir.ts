// Where runs keep their runtime files (sockets, owner file, kubelet token and CA): a base only this
// user can write, and per run a folder made exclusively inside it, never reached through a symlink.
import { chmodSync, lstatSync, mkdirSync, realpathSync, type Stats } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { UnsafePathError } from '../errors.js';

/** The environment variable that moves the base (tests, machines without /run); checked like the default. */
export const RUNTIME_DIR_ENV = 'ATTESTORM_TMPDIR';

/**
 * Mode of the base: the owner writes, others may only traverse. Pods of another uid must reach the
 * agent's socket below it; without read they cannot list the runs, without write they cannot plant
 * anything in it.
 */
export const BASE_MODE = 0o711;

/** The base: $ATTESTORM_TMPDIR; /run/attestorm for root; $XDG_RUNTIME_DIR/attestorm; os.tmpdir()/attestorm-<uid>. */
export function runtimeBase(env: NodeJS.ProcessEnv = process.env): string {
  if (env[RUNTIME_DIR_ENV]) return env[RUNTIME_DIR_ENV];
  const uid = process.geteuid?.() ?? 0;
  if (uid === 0) return '/run/attestorm';
  if (env.XDG_RUNTIME_DIR) return join(env.XDG_RUNTIME_DIR, 'attestorm');
  return join(tmpdir(), `attestorm-${uid}`);
}

function modeOf(st: Stats): string {
  return (st.mode & 0o7777).toString(8).padStart(4, '0');
}

/** Others may add, remove or rename entries: group/other-writable without the sticky bit. */
function othersMayWrite(st: Stats): boolean {
  return (st.mode & 0o022) !== 0 && (st.mode & 0o1000) === 0;
}

/** Refuses a folder another user owns (root's excepted when allowRoot) or that others may write. */
function checkFolder(path: string, st: Stats, what: string, allowRoot: boolean): void {
  const me = process.geteuid?.() ?? 0;
  const ownerOk = st.uid === me || (allowRoot && st.uid === 0);
  if (!ownerOk || othersMayWrite(st))
    throw new UnsafePathError(
      `${what} ${path} is owned by uid ${st.uid} with mode ${modeOf(st)}: it must belong to uid ${me}${allowRoot ? ' or root' : ''} and not be writable by others (group/other write only with the sticky bit); remove it or set ${RUNTIME_DIR_ENV} to a folder of your own`,
    );
}

/** Every folder above path (resolved: a symlinked /var/run is fine when its target is) must be safe from other users. */
function checkParents(path: string): void {
  let dir: string;
  try {
    dir = realpathSync(dirname(path));
  } catch (err) {
    throw new UnsafePathError(`the runtime folder's parent ${dirname(path)} cannot be resolved: ${(err as Error).message}`, { cause: err });
  }
  for (;;) {
    checkFolder(dir, lstatSync(dir), 'folder above the runtime folder', true);
    if (dir === dirname(dir)) break;
    dir = dirname(dir);
  }
}

/**
 * The base, made (mode 0711) when missing, and proven safe: a real folder (not a symlink) of this
 * user that nobody else may write, below folders nobody else may write. Throws UnsafePathError
 * naming the path, its owner and mode; called before any process starts.
 */
export function ensureRuntimeBase(base = runtimeBase()): string {
  checkParents(base);
  try {
    mkdirSync(base, { mode: BASE_MODE });
    // Whatever the umask.
    chmodSync(base, BASE_MODE);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST')
      throw new UnsafePathError(`cannot create the runtime folder ${base}: ${(err as Error).message}`, { cause: err });
  }
  const st = lstatSync(base);
  if (st.isSymbolicLink()) throw new UnsafePathError(`the runtime folder ${base} is a symlink (owner uid ${st.uid}): remove it or set ${RUNTIME_DIR_ENV}`);
  if (!st.isDirectory()) throw new UnsafePathError(`the runtime folder ${base} is not a folder (mode ${modeOf(st)}, owner uid ${st.uid})`);
  checkFolder(base, st, 'the runtime folder', false);
  return base;
}

/** Proves dir is a real folder of this user that others may not write, before anything is made in it. */
export function assertOwnFolder(dir: string): void {
  let st: Stats;
  try {
    st = lstatSync(dir);
  } catch (err) {
    throw new UnsafePathError(`run folder ${dir} cannot be checked: ${(err as Error).message}`, { cause: err });
  }
  if (st.isSymbolicLink()) throw new UnsafePathError(`run folder ${dir} is a symlink (owner uid ${st.uid}): refusing to use it`);
  if (!st.isDirectory()) throw new UnsafePathError(`run folder ${dir} is not a folder (mode ${modeOf(st)}, owner uid ${st.uid})`);
  checkFolder(dir, st, 'run folder', false);
}

/**
 * A run's folder in the (checked) base, made exclusively: mkdir fails on anything already there,
 * a symlink included, and the run ID's random part makes the name unguessable. Mode 0700, or 0711
 * when pods of another uid must reach files in it by name (the agent's socket, copied bundles).
 */
export function createRunFolder(dir: string, open: boolean): string {
  ensureRuntimeBase(dirname(dir));
  const mode = open ? 0o711 : 0o700;
  try {
    mkdirSync(dir, { mode });
  } catch (err) {
    const st = lstatSafe(dir);
    const what = st ? `${st.isSymbolicLink() ? 'a symlink' : 'something'} (owner uid ${st.uid}, mode ${modeOf(st)})` : (err as Error).message;
    throw new UnsafePathError(`run folder ${dir} already exists as ${what}: a run folder is only ever made new`, { cause: err });
  }
  chmodSync(dir, mode);
  return dir;
}

/** The run's folder: made when missing, else proven to be this user's own. */
export function ensureRunFolder(dir: string, open: boolean): string {
  if (lstatSafe(dir) === null) return createRunFolder(dir, open);
  assertOwnFolder(dir);
  if (open) chmodSync(dir, 0o711);
  return dir;
}

function lstatSafe(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}
