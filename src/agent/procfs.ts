// Reads of /proc/<pid>/… under a configurable proc root (like HOST_PROC), shared by the
// caller check, the attestors and the pod-uid limiter key.
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { statStartTime } from '../util/procfs-stat.js';

export interface ProcStatus {
  uid: number;
  gid: number;
  supplementaryGids: number[];
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks since boot), or null if the process is gone. */
export async function readStartTime(procRoot: string, pid: number): Promise<string | null> {
  let text: string;
  try {
    text = await readFile(join(procRoot, String(pid), 'stat'), 'utf8');
  } catch {
    return null;
  }
  return statStartTime(text);
}

/**
 * The same, read synchronously: procfs files are generated in memory, so a blocking read costs a
 * few microseconds, far less than the thread-pool round trips of an async read on every accept.
 */
export function readStartTimeSync(procRoot: string, pid: number): string | null {
  let text: string;
  try {
    text = readFileSync(join(procRoot, String(pid), 'stat'), 'utf8');
  } catch {
    return null;
  }
  return statStartTime(text);
}


/** Real uid/gid and supplementary groups from /proc/<pid>/status. Throws if the process is gone. */
export async function readStatus(procRoot: string, pid: number): Promise<ProcStatus> {
  const file = join(procRoot, String(pid), 'status');
  return parseStatus(await readFile(file, 'utf8'), file);
}

/** The same, read synchronously (see readStartTimeSync for why that is cheaper on a hot path). */
export function readStatusSync(procRoot: string, pid: number): ProcStatus {
  const file = join(procRoot, String(pid), 'status');
  return parseStatus(readFileSync(file, 'utf8'), file);
}

function parseStatus(text: string, file: string): ProcStatus {
  let uid = -1;
  let gid = -1;
  let supplementaryGids: number[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('Uid:')) uid = Number(line.slice(4).trim().split(/\s+/)[0]);
    else if (line.startsWith('Gid:')) gid = Number(line.slice(4).trim().split(/\s+/)[0]);
    else if (line.startsWith('Groups:')) {
      const rest = line.slice(7).trim();
      supplementaryGids = rest ? rest.split(/\s+/).map(Number) : [];
    }
  }
  if (uid < 0 || gid < 0) throw new Error(`no Uid/Gid lines in ${file}`);
  return { uid, gid, supplementaryGids };
}

/** Raw /proc/<pid>/cgroup text. Throws if the process is gone. */
export function readCgroupText(procRoot: string, pid: number): Promise<string> {
  return readFile(join(procRoot, String(pid), 'cgroup'), 'utf8');
}

export function exePath(procRoot: string, pid: number): string {
  return join(procRoot, String(pid), 'exe');
}
