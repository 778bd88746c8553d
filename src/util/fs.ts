// Reading a directory the way the cgroup and temp-dir scans need it: names only, missing is empty.
import { readdirSync } from 'node:fs';

/** Names of the directories directly under `dir`; empty when `dir` cannot be read (gone, not a directory, no permission). */
export function subdirectories(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
  } catch {
    return [];
  }
}
