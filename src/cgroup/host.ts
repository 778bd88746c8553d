// Finds where this process may create cgroups: the v1 memory hierarchy below its own memory
// cgroup (plus the v1 cpu, freezer and cpuset hierarchies), or the v2 unified hierarchy below its own cgroup.
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export type CgroupVersion = 'v1' | 'v2';

export interface CgroupHost {
  version: CgroupVersion;
  /** Directory under which memory cgroups are created (our own memory cgroup). */
  memoryBase: string;
  /** Directory under which cpu cgroups are created (v1 cpu hierarchy), or null (v2: same dir as memory). */
  cpuBase: string | null;
  /** Directory under which v1 freezer cgroups are created, when writable (v2 freezes in place: cgroup.freeze). */
  freezerBase?: string | null;
  /** Directory under which cpuset cgroups are created (v1 cpuset hierarchy; v2: memoryBase when the cpuset controller is available), or null. */
  cpusetBase?: string | null;
}

export interface DetectOptions {
  /** Mount point of the cgroup filesystems. */
  root?: string;
  /** Contents of /proc/self/cgroup (for tests). */
  selfCgroup?: string;
}

export function writable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** Own cgroup path per controller from /proc/self/cgroup text; '' key is the v2 unified entry. */
export function parseSelfCgroup(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line.trim());
    if (!m) continue;
    for (const controller of m[1]!.split(',')) out.set(controller, m[2]!);
  }
  return out;
}

/**
 * The writable hierarchy, or null with the reason. v1 memory is preferred where both exist,
 * because the v1 memory controller is where hybrid hosts (like this project's CI) account memory.
 */
export function detectCgroupHost(opts: DetectOptions = {}): { host: CgroupHost | null; reason: string } {
  const root = opts.root ?? '/sys/fs/cgroup';
  let self: Map<string, string>;
  try {
    self = parseSelfCgroup(opts.selfCgroup ?? readFileSync('/proc/self/cgroup', 'utf8'));
  } catch (err) {
    return { host: null, reason: `cannot read /proc/self/cgroup (${(err as Error).message})` };
  }
  const memPath = self.get('memory');
  if (memPath !== undefined) {
    const memoryBase = join(root, 'memory', memPath);
    if (existsSync(join(memoryBase, 'memory.limit_in_bytes')) && writable(memoryBase)) {
      const cpuPath = self.get('cpu');
      const cpuDir = cpuPath === undefined ? null : join(root, 'cpu', cpuPath);
      const cpuBase = cpuDir && existsSync(join(cpuDir, 'cpu.shares')) && writable(cpuDir) ? cpuDir : null;
      const freezerPath = self.get('freezer');
      const freezerDir = freezerPath === undefined ? null : join(root, 'freezer', freezerPath);
      const freezerBase = freezerDir && existsSync(join(freezerDir, 'cgroup.procs')) && writable(freezerDir) ? freezerDir : null;
      const cpusetPath = self.get('cpuset');
      const cpusetDir = cpusetPath === undefined ? null : join(root, 'cpuset', cpusetPath);
      const cpusetBase = cpusetDir && existsSync(join(cpusetDir, 'cpuset.cpus')) && writable(cpusetDir) ? cpusetDir : null;
      return { host: { version: 'v1', memoryBase, cpuBase, freezerBase, cpusetBase }, reason: 'cgroup v1 memory hierarchy is writable' };
    }
  }
  const unifiedPath = self.get('');
  if (unifiedPath !== undefined) {
    const mount = existsSync(join(root, 'cgroup.controllers')) ? root : join(root, 'unified');
    const base = join(mount, unifiedPath);
    const controllers = existsSync(join(base, 'cgroup.controllers')) ? readFileSync(join(base, 'cgroup.controllers'), 'utf8') : '';
    if (/\bmemory\b/.test(controllers) && writable(base)) {
      const cpusetBase = /\bcpuset\b/.test(controllers) ? base : null;
      return { host: { version: 'v2', memoryBase: base, cpuBase: null, cpusetBase }, reason: 'cgroup v2 with the memory controller is writable' };
    }
  }
  return {
    host: null,
    reason: 'no writable cgroup memory hierarchy (needs root and a cgroup v1 memory or v2 hierarchy with the memory controller)',
  };
}
