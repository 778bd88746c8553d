// Removing cgroups: every process inside is killed (a v1-frozen one thawed first, or it could not
// die), then the directories go bottom-up, retried while the kernel finishes the exits.
import { existsSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sleep } from '../util/sleep.js';

/** PIDs in the cgroup at dir and every descendant. */
export function collectPids(dir: string): number[] {
  const out: number[] = [];
  if (!existsSync(dir)) return out;
  try {
    for (const line of readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n')) if (line) out.push(Number(line));
    for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) out.push(...collectPids(join(dir, entry.name)));
  } catch {
    // Removed concurrently.
  }
  return out;
}

/**
 * Thaws the v1 freezer cgroup a process is in, if frozen: a frozen task cannot act on SIGKILL, so a
 * run that died during an agent-pause fault would otherwise leave an agent nobody can remove.
 */
function thawV1FreezerOf(pid: number, root = '/sys/fs/cgroup'): void {
  try {
    const path = parseSelfCgroupLine(readFileSync(`/proc/${pid}/cgroup`, 'utf8'), 'freezer');
    if (path === null) return;
    const state = join(root, 'freezer', path, 'freezer.state');
    if (readFileSync(state, 'utf8').trim() !== 'THAWED') writeFileSync(state, 'THAWED');
  } catch {
    // Gone, no freezer hierarchy, or not ours to write.
  }
}

function parseSelfCgroupLine(text: string, controller: string): string | null {
  for (const line of text.split('\n')) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line.trim());
    if (m && m[1]!.split(',').includes(controller)) return m[2]!;
  }
  return null;
}

/**
 * Kills everything under dir, then rmdirs bottom-up; retries while the kernel finishes exits. On a
 * saturated machine a hundred killed workers take seconds to exit (a 5 s limit failed runs at a load
 * average of 100): 30 s, which costs nothing when they exit at once.
 */
export async function removeTree(dir: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (existsSync(dir)) {
    // v2 (5.14+): one write kills the whole subtree, processes forking meanwhile and frozen ones
    // included; the per-process kill below then finds nothing, or covers older kernels and v1.
    killSubtree(dir);
    for (const pid of collectPids(dir)) {
      thawV1FreezerOf(pid);
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    try {
      rmdirTree(dir);
      return;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`cannot remove cgroup ${dir}: ${(err as Error).message}`, { cause: err });
      await sleep(50);
    }
  }
}

function killSubtree(dir: string): void {
  const file = join(dir, 'cgroup.kill');
  if (!existsSync(file)) return;
  try {
    writeFileSync(file, '1');
  } catch {
    // Removed meanwhile; the per-process kill follows.
  }
}

/** rmdir of a directory others may share (a run root, the attestorm/ parent): kept while not empty. */
export function removeIfEmpty(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // Not empty (another run's or component's cgroups are inside) or already gone.
  }
}

function rmdirTree(dir: string): void {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) rmdirTree(join(dir, entry.name));
  rmdirSync(dir);
}
