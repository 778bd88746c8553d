// Where the runner may make cgroups with controllers on cgroup v2. v2's no-internal-processes rule
// lets a cgroup that holds processes enable no controller for its children (only the tree's real
// root is exempt), so the runner first gets a subtree of its own, the way systemd and container
// runtimes do it, proves it with a probe cgroup, and records which way it took.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** The leaf the runner moves itself into, so that the cgroup it was in may delegate controllers. */
export const RUNNER_LEAF = 'attestorm-runner';
/** Set in the environment of a runner re-executed by systemd-run in a delegated scope (its unit name). */
export const DELEGATED_SCOPE_ENV = 'ATTESTORM_DELEGATED_SCOPE';

export type DelegationKind =
  /** The runner is in the tree's real root, which may hold processes and delegate at once. */
  | 'root-cgroup'
  /** Alone in its cgroup: it moved itself into a leaf and enabled controllers in the cgroup it left. */
  | 'leaf-move'
  /** It shared its cgroup and systemd runs: it re-ran itself in a transient scope with Delegate=yes. */
  | 'systemd-scope'
  /** It shared its cgroup, root, no systemd: its cgroups go in a fresh cgroup at the tree's root. */
  | 'fresh-cgroup'
  /** The root of a container's cgroup namespace, shared: every process there moved into a leaf `init`. */
  | 'container-init';

export interface Delegation {
  kind: DelegationKind;
  /** The directory the runner's cgroups are made below (absolute). */
  base: string;
  /** The runner's cgroup before it moved (relative to the hierarchy's mount). */
  from: string;
  /** What was done, in words, for the results and `debug cgroup`. */
  detail: string;
}

/** What the plan needs to know about this process and host; read from the machine by default. */
export interface DelegationView {
  /** Mount point of the unified hierarchy. */
  mount: string;
  /** This process's cgroup, relative to the mount ("/" for the namespace's root). */
  own: string;
  pid: number;
  uid: number;
  /** PIDs in this process's cgroup (cgroup.procs). */
  procs: number[];
  /** Whether systemd is the init system (the directory /run/systemd/system exists). */
  systemd: boolean;
  /** The unit name when this process is already the re-run inside a delegated scope. */
  delegatedScope: string | null;
}

export type DelegationPlan =
  | { action: 'use'; kind: DelegationKind; base: string; detail: string }
  | { action: 'reexec'; kind: 'systemd-scope'; command: string[]; detail: string }
  | { action: 'refuse'; reason: string };

/** The real root of a v2 tree has no cgroup.type; a container's namespace root (shown as "/") has one. */
export function isRealRoot(dir: string): boolean {
  return existsSync(join(dir, 'cgroup.controllers')) && !existsSync(join(dir, 'cgroup.type'));
}

export function readProcs(dir: string): number[] {
  try {
    return readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** What the processes in a cgroup are, for messages: "1234 (bash), 1240 (sudo)". */
export function describeProcs(pids: readonly number[], limit = 8): string {
  const named = pids.slice(0, limit).map((pid) => {
    try {
      return `${pid} (${readFileSync(`/proc/${pid}/comm`, 'utf8').trim()})`;
    } catch {
      return String(pid);
    }
  });
  return named.join(', ') + (pids.length > limit ? `, and ${pids.length - limit} more` : '');
}

/** How to re-run this very command in a delegated systemd scope (root: system manager; else --user). */
export function scopeCommand(uid: number, argv: readonly string[], unit: string): string[] {
  return ['systemd-run', ...(uid === 0 ? [] : ['--user']), '--scope', '--quiet', '--collect', '-p', 'Delegate=yes', `--unit=${unit}`, '--', ...argv];
}

/**
 * The way to a subtree with controllers, without changing anything. Order: the real root needs
 * nothing; alone in a cgroup outside systemd, a leaf move suffices; under systemd a delegated scope
 * (systemd owns every cgroup it did not delegate, and would undo controller changes made there);
 * root without systemd, a fresh cgroup at the root, or in a container the runtimes' `init` leaf.
 */
export function planDelegation(view: DelegationView, argv: readonly string[] = process.argv): DelegationPlan {
  const ownDir = view.own === '/' ? view.mount : join(view.mount, view.own);
  if (view.own === '/' && isRealRoot(ownDir)) {
    return {
      action: 'use',
      kind: 'root-cgroup',
      base: ownDir,
      detail: 'the runner is in the root cgroup, which may delegate controllers while it holds processes',
    };
  }
  const others = view.procs.filter((p) => p !== view.pid);
  if (view.delegatedScope !== null || (others.length === 0 && !view.systemd)) {
    const where = view.delegatedScope !== null ? `the delegated systemd scope ${view.delegatedScope}` : `its cgroup ${view.own}`;
    return {
      action: 'use',
      kind: view.delegatedScope !== null ? 'systemd-scope' : 'leaf-move',
      base: ownDir,
      detail: `the runner moved itself from ${where} into the leaf ${RUNNER_LEAF} and enabled controllers for the cgroup's children`,
    };
  }
  if (view.systemd) {
    const unit = `attestorm-${view.pid}.scope`;
    return {
      action: 'reexec',
      kind: 'systemd-scope',
      command: scopeCommand(view.uid, argv, unit),
      detail: `the runner shared ${view.own} with ${describeProcs(others)}; it re-ran itself in the transient scope ${unit} with Delegate=yes${view.uid === 0 ? '' : ' (the user manager)'}`,
    };
  }
  const shared = `cgroup v2 cgroup ${view.own} also holds ${describeProcs(others)}, so it cannot delegate controllers to the runner's cgroups (no-internal-processes rule)`;
  if (view.uid === 0 && isRealRoot(view.mount)) {
    return {
      action: 'use',
      kind: 'fresh-cgroup',
      base: view.mount,
      detail: `the runner shared ${view.own} with ${describeProcs(others)}; its cgroups go below the root cgroup instead, in ${join(view.mount, 'attestorm')}`,
    };
  }
  if (view.uid === 0 && view.own === '/') {
    return {
      action: 'use',
      kind: 'container-init',
      base: ownDir,
      detail: `the container's cgroup namespace root held ${describeProcs(view.procs)}; every process there moved into the leaf init (as container runtimes do) and controllers were enabled for its children`,
    };
  }
  return {
    action: 'refuse',
    reason:
      `${shared}, and no way to a delegated subtree exists here (no systemd${view.uid === 0 ? '' : ', not root'}). ` +
      `Run it where it is alone in its cgroup (e.g. as a service or container's only process), ` +
      (view.uid === 0
        ? 'or on a host with systemd'
        : 'or as root (sudo npm start), or on a host with systemd (it then uses systemd-run --user --scope -p Delegate=yes)'),
  };
}

/** The view of this process, read from /proc and the cgroup mount. */
export function readView(mount: string, own: string): DelegationView {
  return {
    mount,
    own,
    pid: process.pid,
    uid: process.getuid?.() ?? 0,
    procs: readProcs(join(mount, own)),
    systemd: existsSync('/run/systemd/system'),
    delegatedScope: process.env[DELEGATED_SCOPE_ENV] || null,
  };
}

/**
 * Enables controllers of `ctls` (memory first) in dir's cgroup.subtree_control. Throws naming the
 * cgroup, the rule and the processes in it when memory cannot be enabled; returns the others refused.
 */
export function enableControllers(dir: string, ctls: readonly string[]): string[] {
  const available = readText(join(dir, 'cgroup.controllers')).split(/\s+/);
  const enabled = readText(join(dir, 'cgroup.subtree_control')).split(/\s+/);
  const refused: string[] = [];
  for (const ctl of ctls) {
    if (enabled.includes(ctl)) continue;
    if (!available.includes(ctl)) {
      if (ctl === 'memory')
        throw new Error(`cgroup ${dir} has no memory controller to give its children (cgroup.controllers: ${available.join(' ') || 'none'})`);
      refused.push(`${ctl} (not available)`);
      continue;
    }
    try {
      writeFileSync(join(dir, 'cgroup.subtree_control'), `+${ctl}`);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      if (ctl !== 'memory') {
        refused.push(`${ctl} (${code})`);
        continue;
      }
      const procs = readProcs(dir);
      const why = code === 'EBUSY' && procs.length ? `: it holds processes ${describeProcs(procs)} (cgroup v2's no-internal-processes rule)` : '';
      throw new Error(`cannot enable the memory controller for the children of cgroup ${dir} (${code})${why}`, { cause: err });
    }
  }
  return refused;
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return '';
  }
}

/** Moves the runner into <dir>/attestorm-runner and enables controllers in dir; undone by the returned function. */
export function moveIntoLeaf(dir: string, pid = process.pid): () => void {
  const leaf = join(dir, RUNNER_LEAF);
  mkdirSync(leaf, { recursive: true });
  writeFileSync(join(leaf, 'cgroup.procs'), String(pid));
  return () => {
    // Back where it came from: the controllers are disabled first, or the move would be refused.
    try {
      for (const ctl of ['cpuset', 'cpu', 'memory']) {
        try {
          writeFileSync(join(dir, 'cgroup.subtree_control'), `-${ctl}`);
        } catch {
          // Not enabled, or another child still uses it: then the runner stays in its leaf.
        }
      }
      writeFileSync(join(dir, 'cgroup.procs'), String(pid));
      rmdirSync(leaf);
    } catch {
      // The runner's own cgroup goes with its unit or container; nothing else is left.
    }
  };
}

/** Moves every process of a container's namespace root into `init`, as container runtimes do. */
export function moveAllIntoInit(dir: string): void {
  const init = join(dir, 'init');
  mkdirSync(init, { recursive: true });
  for (const pid of readProcs(dir)) {
    try {
      writeFileSync(join(init, 'cgroup.procs'), String(pid));
    } catch (err) {
      // Kernel threads and exited processes refuse; anything else left behind makes the enable fail, naming it.
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH' && (err as NodeJS.ErrnoException).code !== 'EINVAL') throw err;
    }
  }
}

/**
 * Proves a base: a probe cgroup below it gets the memory controller, a limit and swap 0 can be
 * written, then it is removed. Returns the controllers missing for the run's other features.
 */
export function probeBase(base: string, ctls: readonly string[], pid = process.pid): string[] {
  const refused = enableControllers(base, ctls);
  const probe = join(base, `attestorm-probe-${pid}`);
  mkdirSync(probe, { recursive: true });
  try {
    if (!existsSync(join(probe, 'memory.max'))) throw new Error(`the probe cgroup ${probe} has no memory.max although memory is enabled in ${base}`);
    writeFileSync(join(probe, 'memory.max'), String(64 * 1024 * 1024));
    if (existsSync(join(probe, 'memory.swap.max'))) writeFileSync(join(probe, 'memory.swap.max'), '0');
    return refused;
  } finally {
    rmdirSync(probe);
  }
}

/** The base of a runner that already sits in its leaf (a re-run, or a later call in the same process). */
export function baseOfLeaf(mount: string, own: string): string | null {
  return basename(own) === RUNNER_LEAF ? join(mount, dirname(own)) : null;
}
