// The last lines of a SPIRE log, quoted in errors so a failed start explains itself.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** The last `n` non-empty lines of `file` (reading at most its last 64 KiB); [] when unreadable. */
export function lastLogLines(file: string, n = 8): string[] {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return [];
  }
  try {
    const size = fstatSync(fd).size;
    const len = Math.min(size, 64 * 1024);
    const buf = Buffer.alloc(len);
    readSync(fd, buf, 0, len, size - len);
    return buf
      .toString('utf8')
      .split('\n')
      .map((l) => l.trimEnd())
      .filter((l) => l !== '')
      .slice(-n);
  } finally {
    closeSync(fd);
  }
}

/** " Last log lines of <file>:\n  | ..." or a note that the log is empty. */
export function quoteLog(file: string, n = 8): string {
  const lines = lastLogLines(file, n);
  if (lines.length === 0) return ` (${file} is empty)`;
  return ` Last lines of ${file}:\n${lines.map((l) => `  | ${l}`).join('\n')}`;
}
