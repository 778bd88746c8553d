// A CPU budget for a whole run: the runner moves itself into a cpu cgroup with a CFS quota before it
// starts anything, so the agent, the pods and their workers — whose cgroups are made below the
// runner's own — share `cores` CPUs' worth of time. A smaller or busier machine, made on demand.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { ConfigError, PlatformError } from '../errors.js';
import { enableControllers, RUNNER_LEAF } from './delegation.js';
import { detectCgroupHost, parseSelfCgroup, unifiedMount, writable } from './host.js';

export const CPU_PERIOD_US = 100_000;

export interface CpuBudget {
  cores: number;
  /** The cgroup directory holding the runner (cpu hierarchy on v1, the unified one on v2). */
  dir: string;
  version: 'v1' | 'v2';
  /** Moves the runner back to the cgroup it came from and removes the budget's. Idempotent. */
  release(): void;
}

export interface CpuBudgetOptions {
  root?: string;
  selfCgroup?: string;
  pid?: number;
  /** CPUs of the machine (the largest budget that means anything). */
  machineCpus?: number;
}

/** Checks a budget in cores: a positive number no larger than the machine's CPUs (ConfigError naming the flag). */
export function checkCpuBudget(cores: number, flag = '--cpu-budget', machineCpus = cpus().length): number {
  if (!Number.isFinite(cores) || cores < 0.1) throw new ConfigError(`${flag} must be a number of cores of at least 0.1 (e.g. 1.5), got ${cores}`);
  if (cores > machineCpus) throw new ConfigError(`${flag} asks for ${cores} cores, but this machine has ${machineCpus}`);
  return cores;
}

/**
 * Moves this process into <own cpu cgroup>/attestorm/budget-<pid> with a quota of `cores` × the
 * period. PlatformError when no writable cpu hierarchy exists (the message says where it looked).
 */
export function applyCpuBudget(cores: number, opts: CpuBudgetOptions = {}): CpuBudget {
  checkCpuBudget(cores, '--cpu-budget', opts.machineCpus);
  const root = opts.root ?? '/sys/fs/cgroup';
  const pid = opts.pid ?? process.pid;
  const self = parseSelfCgroup(opts.selfCgroup ?? readFileSync('/proc/self/cgroup', 'utf8'));
  const quota = String(Math.round(cores * CPU_PERIOD_US));
  const v1 = self.get('cpu');
  if (v1 !== undefined && existsSync(join(root, 'cpu', v1, 'cpu.cfs_quota_us'))) return budgetV1(cores, join(root, 'cpu', v1), quota, pid);
  if (self.has('') && opts.root === undefined) return budgetV2(cores, quota, pid);
  throw new PlatformError(
    `--cpu-budget needs a cpu cgroup controller (v1 ${join(root, 'cpu')}, or v2 with "cpu" in cgroup.controllers) below this process's own cgroup; none found`,
  );
}

function budgetV1(cores: number, from: string, quota: string, pid: number): CpuBudget {
  if (!writable(from)) throw new PlatformError(`--cpu-budget needs to create a cgroup in ${from}, which this process cannot write (run as root)`);
  const parent = join(from, 'attestorm');
  const dir = join(parent, `budget-${pid}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'cpu.cfs_period_us'), String(CPU_PERIOD_US));
  writeFileSync(join(dir, 'cpu.cfs_quota_us'), quota);
  writeFileSync(join(dir, 'cgroup.procs'), String(pid));
  return { cores, dir, version: 'v1', release: once(() => moveBack(from, pid, [dir, parent])) };
}

/**
 * v2: the budget is a cgroup below the runner's delegated base, and the runner moves into a leaf of
 * it, so the budget's cgroup may still give controllers to the run's cgroups made below it.
 */
function budgetV2(cores: number, quota: string, pid: number): CpuBudget {
  const { host, reason } = detectCgroupHost();
  if (!host || host.version !== 'v2') throw new PlatformError(`--cpu-budget needs a cgroup v2 subtree with the cpu controller: ${reason}`);
  // Where the runner is now (detectCgroupHost may just have moved it into its leaf): where it returns to.
  const own = parseSelfCgroup(readFileSync('/proc/self/cgroup', 'utf8')).get('') ?? '/';
  const back = join(unifiedMount(), own);
  const parent = join(host.memoryBase, 'attestorm');
  const dir = join(parent, `budget-${pid}`);
  const leaf = join(dir, RUNNER_LEAF);
  mkdirSync(leaf, { recursive: true });
  for (const d of [host.memoryBase, parent, dir]) {
    const refused = enableControllers(d, ['memory', 'cpu', ...(host.cpusetBase ? ['cpuset'] : [])]);
    if (refused.some((r) => r.startsWith('cpu '))) throw new PlatformError(`--cpu-budget needs the cpu controller in ${d}: ${refused.join(', ')}`);
  }
  writeFileSync(join(dir, 'cpu.max'), `${quota} ${CPU_PERIOD_US}`);
  writeFileSync(join(leaf, 'cgroup.procs'), String(pid));
  return { cores, dir, version: 'v2', release: once(() => moveBack(back, pid, [leaf, dir, parent])) };
}

function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}

/** The runner back where it came from, and the budget's directories removed where empty. */
function moveBack(from: string, pid: number, dirs: string[]): void {
  writeFileSync(join(from, 'cgroup.procs'), String(pid));
  for (const d of dirs) {
    try {
      rmdirSync(d);
    } catch {
      // Not empty (another run's cgroups under attestorm/) or already gone.
    }
  }
}

/** CPU time the budget's cgroup has been throttled (v1 cpu.stat throttled_time ns, v2 throttled_usec), in seconds; null when unreadable. */
export function throttledSeconds(b: Pick<CpuBudget, 'dir' | 'version'>): number | null {
  try {
    const text = readFileSync(join(b.dir, 'cpu.stat'), 'utf8');
    const key = b.version === 'v1' ? 'throttled_time' : 'throttled_usec';
    const m = new RegExp(`^${key} (\\d+)$`, 'm').exec(text);
    if (!m) return null;
    return Number(m[1]) / (b.version === 'v1' ? 1e9 : 1e6);
  } catch {
    return null;
  }
}

/**
 * The CPU quota this process runs under, in cores: the smallest CFS quota of its cpu cgroup and
 * the ones above it (v1 cpu.cfs_quota_us / cpu.cfs_period_us, v2 cpu.max); null when unlimited or
 * unreadable. A --cpu-budget run reads its own budget here, and so does a process in a container.
 */
export function cpuQuotaCores(opts: { root?: string; selfCgroup?: string } = {}): number | null {
  const root = opts.root ?? '/sys/fs/cgroup';
  let self: Map<string, string>;
  try {
    self = parseSelfCgroup(opts.selfCgroup ?? readFileSync('/proc/self/cgroup', 'utf8'));
  } catch {
    return null;
  }
  const v1 = self.get('cpu');
  const base = v1 !== undefined ? join(root, 'cpu') : self.has('') ? root : null;
  const rel = v1 ?? self.get('');
  if (base === null || rel === undefined) return null;
  let best: number | null = null;
  for (let p = rel; ; p = p.slice(0, Math.max(0, p.lastIndexOf('/')))) {
    const cores = v1 !== undefined ? quotaV1(join(base, p)) : quotaV2(join(base, p));
    if (cores !== null) best = best === null ? cores : Math.min(best, cores);
    if (p === '' || p === '/') break;
  }
  return best;
}

function quotaV1(dir: string): number | null {
  try {
    const quota = Number(readFileSync(join(dir, 'cpu.cfs_quota_us'), 'utf8'));
    const period = Number(readFileSync(join(dir, 'cpu.cfs_period_us'), 'utf8'));
    return quota > 0 && period > 0 ? quota / period : null;
  } catch {
    return null;
  }
}

function quotaV2(dir: string): number | null {
  try {
    const [quota, period] = readFileSync(join(dir, 'cpu.max'), 'utf8').trim().split(/\s+/);
    return quota !== 'max' && Number(quota) > 0 && Number(period) > 0 ? Number(quota) / Number(period) : null;
  } catch {
    return null;
  }
}
