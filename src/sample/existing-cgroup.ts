// Read-only access to a cgroup someone else owns (an external agent's): nothing is created or
// written — Cgroup.create would mkdir and, on v2, enable controllers in every ancestor.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Cgroup } from '../cgroup/index.js';

/** A Cgroup view of an existing directory, for reading only; null when it is not a memory cgroup. */
export function openExistingCgroup(dir: string): Cgroup | null {
  const version = existsSync(join(dir, 'memory.current')) ? 'v2' : existsSync(join(dir, 'memory.usage_in_bytes')) ? 'v1' : null;
  if (!version) return null;
  // Cgroup's constructor is private to keep creation in one place; a reader needs only its fields.
  return Object.assign(Object.create(Cgroup.prototype) as Cgroup, { version, path: dir, cpuPath: null, relPath: dir });
}
