// Run identity and ownership: a run ID embeds its owner's PID, and an owner file records the
// owner's start time, so `attestorm cleanup` can tell a killed run's leftovers from a live run's.
import { randomBytes } from 'node:crypto';
import { closeSync, constants, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { statStartTime } from '../util/procfs-stat.js';
import { assertOwnFolder, runtimeBase } from './runtime-dir.js';

/** Where every run keeps its runtime files (tokens, CA, sockets): a base of this user's (runtime-dir.ts). */
export function tempRoot(): string {
  return runtimeBase();
}

export function runTempDir(runId: string): string {
  return join(tempRoot(), runId);
}

/** Cgroup directory of a run, relative to the host's memory (and cpu) base. */
export function runCgroupRel(runId: string): string {
  return `attestorm/${runId}`;
}

/** "<prefix>-<pid>-<random>": unique, and naming the process that owns the run. */
export function newRunId(prefix = 'run', pid = process.pid): string {
  const clean =
    prefix
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'run';
  return `${clean}-${pid}-${randomBytes(4).toString('hex')}`;
}

// Linux's PID_MAX_LIMIT: a larger number in a run ID (a date, a counter) is not a PID.
const PID_MAX = 4_194_304;

/**
 * The owner PID embedded by newRunId, or null for run IDs made some other way. Only the exact
 * newRunId shape counts: cleanup kills what a dead owner left, so a guess must never pass for a PID.
 */
export function ownerPidOf(runId: string): number | null {
  const m = /-([1-9]\d{0,6})-[0-9a-f]{8}$/.exec(runId);
  if (!m) return null;
  const pid = Number(m[1]);
  return pid <= PID_MAX ? pid : null;
}

/** Field 22 of /proc/<pid>/stat (start time since boot, in ticks): tells a live owner from a reused PID. */
export function processStartTime(pid: number): string | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return statStartTime(text);
  } catch {
    return null;
  }
}

export interface RunOwner {
  pid: number;
  startTime: string | null;
}

const OWNER_FILE = 'owner.json';

/** The owner file in the run's folder (made beforehand, checked to be this user's), created exclusively. */
export function writeOwnerFile(runId: string, pid = process.pid): string {
  const dir = runTempDir(runId);
  assertOwnFolder(dir);
  const file = join(dir, OWNER_FILE);
  // 'wx': O_EXCL, so neither an existing file nor a symlink planted in its place is written through.
  writeFileSync(file, JSON.stringify({ pid, startTime: processStartTime(pid) } satisfies RunOwner), { flag: 'wx', mode: 0o644 });
  return file;
}

/** A file's text, refused when the file itself is a symlink (O_NOFOLLOW). */
function readNoFollow(file: string): string {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

/** The run's owner from its owner file (in its folder in base), else from its run ID; null when neither says. */
export function readRunOwner(runId: string, base = tempRoot()): RunOwner | null {
  try {
    const parsed = JSON.parse(readNoFollow(join(base, runId, OWNER_FILE))) as Partial<RunOwner>;
    if (typeof parsed.pid === 'number') return { pid: parsed.pid, startTime: typeof parsed.startTime === 'string' ? parsed.startTime : null };
  } catch {
    // No owner file: fall back to the PID in the run ID.
  }
  const pid = ownerPidOf(runId);
  return pid === null ? null : { pid, startTime: null };
}

/** Whether the owner still runs (same PID and, when recorded, the same start time). */
export function ownerAlive(owner: RunOwner): boolean {
  const start = processStartTime(owner.pid);
  if (start === null) return false;
  return owner.startTime === null || owner.startTime === start;
}
