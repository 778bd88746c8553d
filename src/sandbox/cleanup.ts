// Leftovers of runs whose owner died without cleaning up (SIGKILL, OOM, power loss): their cgroups
// (processes killed first) in every hierarchy, their temp dirs, and sockets nobody listens on.
import { existsSync, lstatSync, readdirSync, rmdirSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { detectCgroupHost, removeTree } from '../cgroup/index.js';
import { RUN_ID_RE } from './options.js';
import { ownerAlive, readRunOwner, tempRoot } from './run-id.js';

export interface CleanupOptions {
  /** List what would be removed, remove nothing. */
  dryRun?: boolean;
  /** Temp root to scan (default os.tmpdir()/attestorm). */
  tempDir?: string;
}

/** A run is dead when its owner (from its owner file or run ID) no longer runs; unknown owners are kept. */
function isDeadRun(runId: string): boolean {
  if (!RUN_ID_RE.test(runId)) return false;
  const owner = readRunOwner(runId);
  return owner !== null && !ownerAlive(owner);
}

function listDirs(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
  } catch {
    return [];
  }
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

async function staleSockets(dir: string, depth: number): Promise<string[]> {
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
    else if (e.isDirectory() && depth > 0) out.push(...(await staleSockets(p, depth - 1)));
  }
  return out;
}

/** Removes (or with dryRun lists) leftovers of dead runs; returns the paths concerned. */
export async function cleanupLeftovers(opts: CleanupOptions = {}): Promise<string[]> {
  const dry = opts.dryRun ?? false;
  const tmp = opts.tempDir ?? tempRoot();
  const found: string[] = [];

  // Cgroups first: the owner files in the temp dirs are what tells a dead run from a live one.
  const { host } = detectCgroupHost();
  const bases = host ? [host.memoryBase, host.cpuBase].filter((b): b is string => b !== null) : [];
  const deadRuns = new Set<string>();
  for (const base of bases) {
    const root = join(base, 'attestorm');
    for (const runId of listDirs(root)) {
      if (!isDeadRun(runId)) continue;
      deadRuns.add(runId);
      const dir = join(root, runId);
      found.push(dir);
      if (!dry) await removeTree(dir);
    }
    if (!dry && existsSync(root) && listDirs(root).length === 0) {
      try {
        rmdirSync(root);
      } catch {
        // A run started meanwhile.
      }
    }
  }

  for (const name of listDirs(tmp)) {
    if (!deadRuns.has(name) && !isDeadRun(name)) continue;
    const dir = join(tmp, name);
    found.push(dir);
    if (!dry) rmSync(dir, { recursive: true, force: true });
  }

  if (existsSync(tmp) && lstatSync(tmp).isDirectory()) {
    for (const sock of await staleSockets(tmp, 2)) {
      if (found.some((f) => sock.startsWith(f + '/'))) continue;
      found.push(sock);
      if (!dry) rmSync(sock, { force: true });
    }
  }
  return found;
}
