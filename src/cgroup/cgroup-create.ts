// Where a cgroup's directories go in each hierarchy (memory or unified, and v1's cpu, freezer and
// cpuset) and making them, with v2's controllers delegated down to the new cgroup.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createCpuset } from './cpuset.js';
import { enableControllers } from './delegation.js';
import type { CgroupHost } from './host.js';

/** Absolute directories of one cgroup; null for a hierarchy it is not in (v2 keeps all in `path`). */
export interface CgroupDirs {
  path: string;
  cpuPath: string | null;
  freezerPath: string | null;
  cpusetPath: string | null;
}

export interface CreateCgroupOptions {
  cpu?: boolean;
  freezer?: boolean;
  cpus?: string;
}

/** mkdir -p of the cgroup at relPath in each hierarchy it joins (see Cgroup.create). */
export function createCgroupDirs(host: CgroupHost, relPath: string, opts: CreateCgroupOptions): CgroupDirs {
  const path = join(host.memoryBase, relPath);
  mkdirSync(path, { recursive: true });
  let cpuPath: string | null = null;
  if (opts.cpu && host.cpuBase) {
    cpuPath = join(host.cpuBase, relPath);
    mkdirSync(cpuPath, { recursive: true });
  }
  let freezerPath: string | null = null;
  if (opts.freezer && host.version === 'v1' && host.freezerBase) {
    freezerPath = join(host.freezerBase, relPath);
    mkdirSync(freezerPath, { recursive: true });
  }
  if (host.version === 'v2') enableV2Controllers(host.memoryBase, relPath);
  let cpusetPath: string | null = null;
  if (opts.cpus !== undefined) {
    if (!host.cpusetBase) throw new Error(`cannot pin cgroup ${relPath} to CPUs ${opts.cpus}: no writable cpuset hierarchy`);
    const dir = createCpuset(host.version, host.cpusetBase, relPath, opts.cpus);
    if (host.version === 'v1') cpusetPath = dir;
  }
  return { path, cpuPath, freezerPath, cpusetPath };
}

function enableV2Controllers(base: string, relPath: string): void {
  // Each ancestor between the base and the new cgroup must delegate memory and cpu to its children
  // (cpuset: createCpuset, when the cgroup is pinned). Memory refused is an error naming the cgroup;
  // cpu refused shows in canLimitCpu().
  let dir = base;
  for (const part of relPath.split('/').filter(Boolean)) {
    enableControllers(dir, ['memory', 'cpu']);
    dir = join(dir, part);
  }
}
