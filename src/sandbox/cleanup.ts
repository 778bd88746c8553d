// Leftovers of runs whose owner died without cleaning up (SIGKILL, OOM, power loss): their pod
// processes, their cgroups in every hierarchy (and a CPU budget's quota cgroup), their temp dirs,
// and sockets nobody listens on.
import { existsSync, lstatSync, readdirSync, readFileSync, rmSync, type Stats } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { removeIfEmpty, removeTree, runCgroupParents } from '../cgroup/index.js';
import { subdirectories } from '../util/fs.js';
import { RUN_ID_RE } from './options.js';
import { ownerAlive, ownerPidOf, readRunOwner, tempRoot } from './run-id.js';
import { assertOwnFolder } from './runtime-dir.js';

export interface CleanupOptions {
  /** List what would be removed, remove nothing. */
  dryRun?: boolean;
  /** Runtime base to scan (default: runtimeBase(), this user's). */
  tempDir?: string;
}

/** A run is dead when its owner (from its owner file or run ID) no longer runs; unknown owners are kept. */
function isDeadRun(runId: string, base: string): boolean {
  if (!RUN_ID_RE.test(runId)) return false;
  const owner = readRunOwner(runId, base);
  return owner !== null && !ownerAlive(owner);
}

/**
 * Only what is provably a run's own is deleted: a real folder (never a symlink), owned by this
 * user, named like a run ID (newRunId's shape, its owner PID inside).
 */
function isOwnRunFolder(dir: string, name: string): boolean {
  if (ownerPidOf(name) === null) return false;
  let st: Stats;
  try {
    st = lstatSync(dir);
  } catch {
    return false;
  }
  return st.isDirectory() && !st.isSymbolicLink() && st.uid === process.geteuid?.();
}

/** True when nothing accepts connections on the socket (ECONNREFUSED): a dead listener's file. */
function socketIsStale(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect(path);
    const done = (stale: boolean) => {
      sock.destroy();
      resolve(stale);
    };
    sock.setTimeout(1000, () => done(false));
    sock.once('connect', () => done(false));
    sock.once('error', (err: NodeJS.ErrnoException) => done(err.code === 'ECONNREFUSED' || err.code === 'ENOENT'));
  });
}

async function staleSockets(dir: string, depth: number, skipDir: (name: string) => boolean = () => false): Promise<string[]> {
  const out: string[] = [];
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isSocket() && (await socketIsStale(p))) out.push(p);
    else if (e.isDirectory() && depth > 0 && !skipDir(e.name)) out.push(...(await staleSockets(p, depth - 1)));
  }
  return out;
}

/**
 * Processes of dead runs, found by the ATTESTORM_RUN_ID every pod process carries in its environment
 * (children inherit it): the only handle on pods that ran without cgroups once their owner is gone.
 */
function deadRunProcesses(isDead: (runId: string) => boolean): Array<{ pid: number; runId: string }> {
  const out: Array<{ pid: number; runId: string }> = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const name of entries) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    let env: string;
    try {
      env = readFileSync(`/proc/${name}/environ`, 'latin1');
    } catch {
      continue; // gone, or not ours to read
    }
    const at = env.indexOf(RUN_ENV);
    if (at < 0 || (at > 0 && env[at - 1] !== '\0')) continue;
    const end = env.indexOf('\0', at);
    const runId = env.slice(at + RUN_ENV.length, end < 0 ? undefined : end);
    if (isDead(runId)) out.push({ pid: Number(name), runId });
  }
  return out;
}

const RUN_ENV = 'ATTESTORM_RUN_ID=';

/** `budget-<pid>`, the CPU quota cgroup of `--cpu-budget` (src/cgroup/cpu-budget.ts): dead when that pid no longer runs. */
function deadBudget(name: string): boolean {
  const m = /^budget-(\d+)$/.exec(name);
  return m !== null && !existsSync(`/proc/${m[1]}`);
}

/** Removes (or with dryRun lists) leftovers of dead runs; returns the paths (and "pid <n> (run <id>)") concerned. */
export async function cleanupLeftovers(opts: CleanupOptions = {}): Promise<string[]> {
  const dry = opts.dryRun ?? false;
  const tmp = opts.tempDir ?? tempRoot();
  const found: string[] = [];

  // Processes and cgroups first: the owner files in the temp dirs tell a dead run from a live one.
  const verdicts = new Map<string, boolean>();
  const dead = (runId: string) => {
    let v = verdicts.get(runId);
    if (v === undefined) verdicts.set(runId, (v = isDeadRun(runId, tmp)));
    return v;
  };
  for (const { pid, runId } of deadRunProcesses(dead)) {
    found.push(`pid ${pid} (run ${runId})`);
    if (!dry) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Exited meanwhile.
      }
    }
  }

  const { parents, strayLeaves } = runCgroupParents();
  const deadRuns = new Set<string>();
  for (const root of parents) {
    for (const runId of subdirectories(root)) {
      if (deadBudget(runId)) {
        // A --cpu-budget run's quota cgroup (and any run cgroups below it), its owner gone.
        const dir = join(root, runId);
        found.push(dir);
        if (!dry) await removeTree(dir);
        continue;
      }
      if (!dead(runId)) continue;
      deadRuns.add(runId);
      const dir = join(root, runId);
      found.push(dir);
      if (!dry) await removeTree(dir);
    }
    if (!dry) removeIfEmpty(root);
  }
  // v2: the leaf a killed runner sat in, or its probe, empty now.
  for (const leaf of strayLeaves) {
    found.push(leaf);
    if (!dry) removeIfEmpty(leaf);
  }

  // A base another user controls is refused (UnsafePathError) rather than cleaned.
  const baseHere = existsSync(tmp) || lstatSync(tmp, { throwIfNoEntry: false }) !== undefined;
  if (baseHere) assertOwnFolder(tmp);
  for (const name of baseHere ? subdirectories(tmp) : []) {
    const dir = join(tmp, name);
    if (!isOwnRunFolder(dir, name)) continue;
    if (!deadRuns.has(name) && !dead(name)) continue;
    found.push(dir);
    // rm -r semantics: a symlink inside is unlinked, never followed.
    if (!dry) rmSync(dir, { recursive: true, force: true });
  }

  if (baseHere) {
    // A live run's own dir is its business: its agent may be between bind and listen right now.
    const liveRun = (name: string) => {
      const owner = RUN_ID_RE.test(name) ? readRunOwner(name, tmp) : null;
      return owner !== null && ownerAlive(owner);
    };
    for (const sock of await staleSockets(tmp, 2, liveRun)) {
      if (found.some((f) => sock.startsWith(f + '/'))) continue;
      found.push(sock);
      if (!dry) rmSync(sock, { force: true });
    }
  }
  return found;
}
