// Reads of /proc/<pid>/… under a configurable proc root (like HOST_PROC), shared by the
// caller check, the attestors and the pod-uid limiter key.
import { closeSync, constants, openSync, readSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface ProcStatus {
  uid: number;
  gid: number;
  supplementaryGids: number[];
}

/**
 * The same, read synchronously into a shared buffer: procfs files are generated in memory, so a
 * blocking open/read/close costs a few microseconds — less than readFileSync (which adds an fstat
 * and a string of the whole file) and far less than the thread-pool round trips of an async read.
 * This runs on every accept and every admitted call.
 */
export function readStartTimeSync(procRoot: string, pid: number): string | null {
  const n = readProcFileSync(procRoot, pid, 'stat');
  return n < 0 ? null : startTimeOf(scratch, n);
}

// One buffer for every synchronous procfs read: the agent runs on one thread and each read is
// parsed before the next one starts. /proc/<pid>/status is about 1.5 KiB; stat is under 512 bytes.
const scratch = Buffer.allocUnsafe(16 * 1024);

/** Reads /proc/<pid>/<file> into `scratch`; the byte count, or -1 if it cannot be opened or read. */
function readProcFileSync(procRoot: string, pid: number, file: string): number {
  let fd: number;
  try {
    fd = openSync(`${procRoot}/${pid}/${file}`, constants.O_RDONLY);
  } catch {
    return -1;
  }
  try {
    let n = 0;
    // procfs hands out a file in one read when the buffer is large enough; loop for safety.
    for (;;) {
      const got = readSync(fd, scratch, n, scratch.length - n, null);
      if (got === 0 || (n += got) === scratch.length) return n;
    }
  } catch {
    return -1;
  } finally {
    closeSync(fd);
  }
}

const CLOSE_PAREN = 0x29;
const SPACE = 0x20;
const NEWLINE = 0x0a;

/**
 * Field 22 of a stat line held in buf[0, n): the command name (field 2) may hold spaces and
 * parentheses, so fields are counted after its last ')'. Same rule as util/procfs-stat, on bytes.
 */
function startTimeOf(buf: Buffer, n: number): string | null {
  let i = n - 1;
  while (i >= 0 && buf[i] !== CLOSE_PAREN) i--;
  if (i < 0) return null;
  i += 2; // past ") ": field 3 starts here
  for (let field = 3; field < 22; field++) {
    while (i < n && buf[i] !== SPACE) i++;
    i++;
  }
  if (i >= n) return null;
  let end = i;
  while (end < n && buf[end] !== SPACE && buf[end] !== NEWLINE) end++;
  return end > i ? buf.toString('latin1', i, end) : null;
}

/** The same, read synchronously (see readStartTimeSync for why that is cheaper on a hot path). */
export function readStatusSync(procRoot: string, pid: number): ProcStatus {
  const n = readProcFileSync(procRoot, pid, 'status');
  if (n < 0) throw new Error(`cannot read ${procRoot}/${pid}/status (process gone?)`);
  return statusOf(scratch, n, `${procRoot}/${pid}/status`);
}

const UID = Buffer.from('Uid:');
const GID = Buffer.from('Gid:');
const GROUPS = Buffer.from('Groups:');

function startsWithAt(buf: Buffer, at: number, n: number, prefix: Buffer): boolean {
  if (at + prefix.length > n) return false;
  for (let k = 0; k < prefix.length; k++) if (buf[at + k] !== prefix[k]) return false;
  return true;
}

/**
 * Uid, Gid (the real ids: the first number of each line) and Groups from status text in
 * buf[0, n), parsed as bytes so no string is made of a 1.5 KiB file on every call.
 */
function statusOf(buf: Buffer, n: number, file: string): ProcStatus {
  let uid = -1;
  let gid = -1;
  let supplementaryGids: number[] = [];
  const numbers = (from: number, all: boolean): number[] => {
    const out: number[] = [];
    let i = from;
    for (;;) {
      while (i < n && (buf[i] === SPACE || buf[i] === 0x09)) i++;
      if (i >= n || buf[i] === NEWLINE) return out;
      let v = 0;
      let digits = 0;
      while (i < n && buf[i]! >= 0x30 && buf[i]! <= 0x39) {
        v = v * 10 + (buf[i]! - 0x30);
        i++;
        digits++;
      }
      if (digits === 0) return out;
      out.push(v);
      if (!all) return out;
    }
  };
  for (let line = 0; line < n;) {
    if (buf[line] === 0x55 /* U */ && startsWithAt(buf, line, n, UID)) uid = numbers(line + UID.length, false)[0] ?? -1;
    else if (buf[line] === 0x47 /* G */) {
      if (startsWithAt(buf, line, n, GID)) gid = numbers(line + GID.length, false)[0] ?? -1;
      else if (startsWithAt(buf, line, n, GROUPS)) supplementaryGids = numbers(line + GROUPS.length, true);
    }
    const next = buf.indexOf(NEWLINE, line);
    if (next < 0 || next >= n) break;
    line = next + 1;
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
