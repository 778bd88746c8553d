// Finds where this process may create cgroups: the v1 memory hierarchy below its own memory
// cgroup (plus the v1 cpu, freezer and cpuset hierarchies), or on v2 a subtree delegated to it (delegation.ts).
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { subdirectories } from '../util/fs.js';
import {
  baseOfLeaf,
  DELEGATED_SCOPE_ENV,
  moveAllIntoInit,
  moveIntoLeaf,
  planDelegation,
  probeBase,
  readView,
  RUNNER_LEAF,
  type Delegation,
  type DelegationPlan,
} from './delegation.js';

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
  /** v2: how the runner came by a subtree it may enable controllers in. */
  delegation?: Delegation;
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

/** Where the unified (v2) hierarchy is mounted: the cgroup root itself, or `unified` below it on a hybrid host. */
export function unifiedMount(root = '/sys/fs/cgroup'): string {
  return existsSync(join(root, 'cgroup.controllers')) ? root : join(root, 'unified');
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
  const mount = unifiedMount(root);
  if (unifiedPath !== undefined && existsSync(join(mount, unifiedPath, 'cgroup.controllers'))) {
    const earlier = provedAbove(mount, unifiedPath);
    if (earlier) return earlier;
    // A hybrid host's unified mount carries no controllers: nothing to delegate, so nothing is moved.
    if (/\bmemory\b/.test(readFileSync(join(mount, unifiedPath, 'cgroup.controllers'), 'utf8'))) return detectV2(mount, unifiedPath);
  }
  return {
    host: null,
    reason: 'no writable cgroup memory hierarchy (needs root and a cgroup v1 memory or v2 hierarchy with the memory controller)',
  };
}

// What this process did to come by its subtree, and each base it has proved (the runner moves
// between cgroups for a CPU budget, so the proof is per cgroup it is in).
let performed: Delegation | null = null;
const proved = new Map<string, { host: CgroupHost | null; reason: string }>();

/**
 * The runner inside its run's own cgroups (CPU isolation moves it into attestorm/<run>/harness, a
 * cgroup with the cpuset controller only): the subtree it proved before it moved there.
 */
function provedAbove(mount: string, own: string): { host: CgroupHost | null; reason: string } | null {
  for (const earlier of proved.values()) {
    if (earlier.host && join(mount, own).startsWith(`${join(earlier.host.memoryBase, 'attestorm')}/`)) return earlier;
  }
  return null;
}

function detectV2(mount: string, own: string): { host: CgroupHost | null; reason: string } {
  const known = proved.get(own);
  if (known) return known;
  let delegation: Delegation;
  const leafBase = baseOfLeaf(mount, own);
  if (leafBase !== null) {
    const scope = process.env[DELEGATED_SCOPE_ENV];
    delegation = performed
      ? {
          ...performed,
          base: leafBase,
          detail: leafBase === performed.base ? performed.detail : `${performed.detail}; then into the CPU budget's cgroup ${leafBase}`,
        }
      : {
          kind: scope ? 'systemd-scope' : 'leaf-move',
          base: leafBase,
          from: dirname(own),
          detail: scope ? `the runner re-ran itself in the delegated systemd scope ${scope} and sits in its leaf` : `the runner sits in the leaf ${own}`,
        };
  } else {
    const plan = planDelegation(readView(mount, own));
    if (plan.action === 'refuse') return remember(own, null, plan.reason);
    if (plan.action === 'reexec') {
      // Only the CLI re-runs itself (before it parses a flag); a library caller is told how.
      return remember(own, null, `${plan.detail.replace(/; it re-ran.*$/, '')}: run it as ${plan.command.join(' ')}`);
    }
    try {
      if (plan.kind === 'leaf-move' || plan.kind === 'systemd-scope') process.on('exit', moveIntoLeaf(plan.base));
      if (plan.kind === 'container-init') moveAllIntoInit(plan.base);
    } catch (err) {
      return remember(own, null, `cannot move the runner out of cgroup ${own} (${(err as Error).message}): ${plan.detail}`);
    }
    delegation = performed = { kind: plan.kind, base: plan.base, from: own, detail: plan.detail };
  }
  if (!writable(delegation.base))
    return remember(own, null, `cgroup ${delegation.base} is not writable by this user (uid ${process.getuid?.()}): ${delegation.detail}`);
  let refused: string[];
  try {
    refused = probeBase(delegation.base, ['memory', 'cpu', 'cpuset']);
  } catch (err) {
    return remember(own, null, `cgroup v2 delegation failed: ${(err as Error).message}; ${delegation.detail}`);
  }
  const cpuset = !refused.some((r) => r.startsWith('cpuset'));
  const host: CgroupHost = { version: 'v2', memoryBase: delegation.base, cpuBase: null, cpusetBase: cpuset ? delegation.base : null, delegation };
  const without = refused.length ? ` (without ${refused.join(', ')})` : '';
  return remember(own, host, `cgroup v2, controllers delegated to ${delegation.base}${without}: ${delegation.detail}`);
}

function remember(own: string, host: CgroupHost | null, reason: string): { host: CgroupHost | null; reason: string } {
  const out = { host, reason };
  proved.set(own, out);
  return out;
}

/** What detectCgroupHost would do here, done nothing yet: for `debug cgroup --host` and the CLI's re-run. */
export type CgroupSetup =
  | { version: 'v1'; base: string; reason: string }
  | { version: 'v2'; own: string; plan: DelegationPlan | { action: 'in-leaf'; base: string } }
  | { version: null; reason: string };

export function planCgroupSetup(argv: readonly string[] = process.argv): CgroupSetup {
  let self: Map<string, string>;
  try {
    self = parseSelfCgroup(readFileSync('/proc/self/cgroup', 'utf8'));
  } catch (err) {
    return { version: null, reason: `cannot read /proc/self/cgroup (${(err as Error).message})` };
  }
  const root = '/sys/fs/cgroup';
  const memPath = self.get('memory');
  if (memPath !== undefined && existsSync(join(root, 'memory', memPath, 'memory.limit_in_bytes')) && writable(join(root, 'memory', memPath))) {
    return { version: 'v1', base: join(root, 'memory', memPath), reason: 'cgroup v1 memory hierarchy is writable' };
  }
  const own = self.get('');
  const mount = unifiedMount(root);
  if (
    own === undefined ||
    !existsSync(join(mount, own, 'cgroup.controllers')) ||
    !/\bmemory\b/.test(readFileSync(join(mount, own, 'cgroup.controllers'), 'utf8'))
  ) {
    return { version: null, reason: 'no writable cgroup v1 memory hierarchy and no cgroup v2 memory controller for this process' };
  }
  const leafBase = baseOfLeaf(mount, own);
  if (leafBase !== null) return { version: 'v2', own, plan: { action: 'in-leaf', base: leafBase } };
  return { version: 'v2', own, plan: planDelegation(readView(mount, own), argv) };
}

/**
 * Every `attestorm` directory that may hold run cgroups, for `attestorm cleanup`: on v1 below this
 * process's own cgroups; on v2 anywhere in the tree (a run may have made them in a delegated scope,
 * its leaf's parent or at the root), found without moving this process. Also the empty runner
 * leaves and probe cgroups that runners killed before they could remove them left on v2.
 */
export function runCgroupParents(root = '/sys/fs/cgroup'): { parents: string[]; strayLeaves: string[] } {
  const mount = unifiedMount(root);
  const setup = planCgroupSetup();
  if (setup.version === 'v1') {
    const { host } = detectCgroupHost({ root });
    const bases = host ? [host.memoryBase, host.cpuBase, host.freezerBase ?? null, host.cpusetBase ?? null] : [];
    return { parents: bases.filter((b): b is string => b !== null).map((b) => join(b, 'attestorm')), strayLeaves: [] };
  }
  if (!existsSync(join(mount, 'cgroup.controllers'))) return { parents: [], strayLeaves: [] };
  const parents: string[] = [];
  const strayLeaves: string[] = [];
  const walk = (dir: string, depth: number) => {
    for (const name of subdirectories(dir)) {
      const sub = join(dir, name);
      if (name === 'attestorm') parents.push(sub);
      else if ((name === RUNNER_LEAF || name.startsWith('attestorm-probe-')) && readProcsFile(sub) === '' && subdirectories(sub).length === 0)
        strayLeaves.push(sub);
      else if (depth < 12) walk(sub, depth + 1);
    }
  };
  walk(mount, 0);
  return { parents, strayLeaves };
}

function readProcsFile(dir: string): string | null {
  try {
    return readFileSync(join(dir, 'cgroup.procs'), 'utf8').trim();
  } catch {
    return null;
  }
}
