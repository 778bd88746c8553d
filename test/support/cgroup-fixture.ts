// Fixture cgroup trees in temp dirs: a base a Cgroup can be created under (as a v2 parent it offers
// the controllers a kernel's would), files written into a cgroup's dir, and cleanup after each test.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';

/** A function giving fresh fixture bases, each removed after the test that made it. */
export function cgroupFixtureBases(prefix: string): () => string {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return () => {
    const d = mkdtempSync(join(tmpdir(), prefix));
    writeFileSync(join(d, 'cgroup.controllers'), 'cpuset cpu io memory pids\n');
    dirs.push(d);
    return d;
  };
}

/** Writes each entry as a file of dir (made if missing). */
export function writeCgroupFiles(dir: string, entries: Record<string, string>): void {
  mkdirSync(dir, { recursive: true });
  for (const [k, v] of Object.entries(entries)) writeFileSync(join(dir, k), v);
}

/** The memory files of a v1 cgroup holding `usage` bytes (its high-water mark too) under `limit`, no OOM kill yet. */
export function v1MemoryFiles(usage: number, stat: string, limit: number): Record<string, string> {
  return {
    'memory.usage_in_bytes': `${usage}\n`,
    'memory.max_usage_in_bytes': `${usage}\n`,
    'memory.limit_in_bytes': `${limit}\n`,
    'memory.oom_control': 'oom_kill_disable 0\nunder_oom 0\noom_kill 0\n',
    'memory.stat': stat,
  };
}

/** The same for v2. */
export function v2MemoryFiles(usage: number, stat: string, limit: number): Record<string, string> {
  return {
    'memory.current': `${usage}\n`,
    'memory.peak': `${usage}\n`,
    'memory.max': `${limit}\n`,
    'memory.events': 'oom 0\noom_kill 0\n',
    'memory.stat': stat,
  };
}
