// One cgroup (a directory per hierarchy): create, move processes in, set memory and CPU limits,
// read memory and OOM-kill counters of both versions, freeze and thaw, and remove it with everything inside.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sleep } from '../util/sleep.js';
import { createCgroupDirs, type CreateCgroupOptions } from './cgroup-create.js';
import { readKeyed, readMemoryFiles, readNum, type MemoryReading } from './cgroup-read.js';
import { collectPids, removeTree } from './cgroup-remove.js';
import type { CgroupHost, CgroupVersion } from './host.js';

export class Cgroup {
  readonly version: CgroupVersion;
  /** Absolute directory in the memory (v1) or unified (v2) hierarchy. */
  readonly path: string;
  /** Absolute directory in the v1 cpu hierarchy, when one is used. */
  readonly cpuPath: string | null;
  /** Absolute directory in the v1 freezer hierarchy, when one is used (v2 freezes in `path`). */
  readonly freezerPath: string | null = null;
  /** Absolute directory in the v1 cpuset hierarchy, when the cgroup is pinned to CPUs (v2 pins in `path`). */
  readonly cpusetPath: string | null = null;
  /** Path relative to the host's base, as given to create(). */
  readonly relPath: string;

  private constructor(
    version: CgroupVersion,
    path: string,
    cpuPath: string | null,
    relPath: string,
    freezerPath: string | null = null,
    cpusetPath: string | null = null,
  ) {
    this.version = version;
    this.path = path;
    this.cpuPath = cpuPath;
    this.relPath = relPath;
    this.freezerPath = freezerPath;
    this.cpusetPath = cpusetPath;
  }

  /**
   * Creates (mkdir -p) the cgroup at relPath below the host's bases. `freezer` joins the v1 freezer
   * hierarchy too (where the host has one), so the cgroup can be frozen as a whole. `cpus` (a kernel
   * CPU list, "1") pins it to those CPUs with a cpuset; it throws when the host has no cpuset base.
   */
  static create(host: CgroupHost, relPath: string, opts: CreateCgroupOptions = {}): Cgroup {
    const dirs = createCgroupDirs(host, relPath, opts);
    return new Cgroup(host.version, dirs.path, dirs.cpuPath, relPath, dirs.freezerPath, dirs.cpusetPath);
  }

  /** Moves a process (and, for new children, its descendants) into this cgroup. */
  addProcess(pid: number): void {
    writeFileSync(join(this.path, 'cgroup.procs'), String(pid));
    if (this.cpuPath) writeFileSync(join(this.cpuPath, 'cgroup.procs'), String(pid));
    if (this.freezerPath) writeFileSync(join(this.freezerPath, 'cgroup.procs'), String(pid));
    if (this.cpusetPath) writeFileSync(join(this.cpusetPath, 'cgroup.procs'), String(pid));
  }

  /**
   * Sets the memory limit and keeps the cgroup from swapping instead of being OOM-killed. Returns
   * whether swap is limited too (false where the kernel has no swap accounting: say so in results).
   */
  setMemoryLimit(bytes: number): { swapLimited: boolean } {
    if (this.version === 'v1') {
      // memsw (memory + swap) must stay >= the memory limit: lower it second when shrinking, raise it first when growing.
      const memsw = join(this.path, 'memory.memsw.limit_in_bytes');
      const hasMemsw = existsSync(memsw);
      if (hasMemsw) {
        try {
          writeFileSync(memsw, String(bytes));
        } catch {
          // Growing: the memory limit has to move first.
        }
      }
      writeFileSync(join(this.path, 'memory.limit_in_bytes'), String(bytes));
      if (hasMemsw) writeFileSync(memsw, String(bytes));
      return { swapLimited: hasMemsw };
    }
    writeFileSync(join(this.path, 'memory.max'), String(bytes));
    const swap = join(this.path, 'memory.swap.max');
    if (!existsSync(swap)) return { swapLimited: false };
    writeFileSync(swap, '0');
    return { swapLimited: true };
  }

  /** Removes the memory limit (v1 writes -1, v2 "max"). */
  clearMemoryLimit(): void {
    writeFileSync(join(this.path, this.version === 'v1' ? 'memory.limit_in_bytes' : 'memory.max'), this.version === 'v1' ? '-1' : 'max');
  }

  /** Sets the limit, or removes it for null: what a fault that saved readMemory().limitBytes restores. */
  restoreMemoryLimit(bytes: number | null): void {
    if (bytes === null) this.clearMemoryLimit();
    else this.setMemoryLimit(bytes);
  }

  /** Whether a CPU quota can be set: a v1 cpu directory, or v2 with cpu.max (the cpu controller enabled). */
  canLimitCpu(): boolean {
    if (this.version === 'v1') return !!this.cpuPath && existsSync(join(this.cpuPath, 'cpu.cfs_quota_us'));
    return existsSync(join(this.path, 'cpu.max'));
  }

  /** The CPU quota in cores (quota / period), or null when unlimited. */
  readCpuQuota(): number | null {
    if (this.version === 'v1') {
      if (!this.cpuPath) return null;
      const quota = readNum(join(this.cpuPath, 'cpu.cfs_quota_us'));
      const period = readNum(join(this.cpuPath, 'cpu.cfs_period_us'));
      return quota === null || quota < 0 || !period ? null : quota / period;
    }
    try {
      const [quota, period] = readFileSync(join(this.path, 'cpu.max'), 'utf8').trim().split(/\s+/);
      return quota === 'max' || !quota ? null : Number(quota) / Number(period ?? 100_000);
    } catch {
      return null;
    }
  }

  /**
   * Caps CPU at `cores` (0.25 = a quarter of one core) with the CFS bandwidth controller, keeping the
   * period in force; null removes the cap. Throws when the cgroup has no CPU controller (canLimitCpu).
   */
  setCpuQuota(cores: number | null): void {
    if (cores !== null && !(cores > 0)) throw new RangeError(`CPU quota must be a positive number of cores, got ${cores}`);
    if (this.version === 'v1') {
      if (!this.cpuPath) throw new Error(`cgroup ${this.relPath} has no v1 cpu directory (create it with { cpu: true })`);
      const period = readNum(join(this.cpuPath, 'cpu.cfs_period_us')) ?? 100_000;
      // The kernel's floor is 1 ms of quota per period.
      writeFileSync(join(this.cpuPath, 'cpu.cfs_quota_us'), cores === null ? '-1' : String(Math.max(1000, Math.round(cores * period))));
      return;
    }
    let period = 100_000;
    try {
      period = Number(readFileSync(join(this.path, 'cpu.max'), 'utf8').trim().split(/\s+/)[1]) || period;
    } catch {
      // Written below; the error there names the problem.
    }
    writeFileSync(join(this.path, 'cpu.max'), cores === null ? `max ${period}` : `${Math.max(1000, Math.round(cores * period))} ${period}`);
  }

  /** Whether the whole cgroup can be frozen: a v1 freezer directory, or v2's cgroup.freeze. */
  canFreeze(): boolean {
    if (this.version === 'v1') return !!this.freezerPath && existsSync(join(this.freezerPath, 'freezer.state'));
    return existsSync(join(this.path, 'cgroup.freeze'));
  }

  /** FROZEN, FREEZING or THAWED (v2 reports FROZEN or THAWED); null when the cgroup cannot be frozen. */
  freezerState(): 'FROZEN' | 'FREEZING' | 'THAWED' | null {
    try {
      if (this.version === 'v1') {
        if (!this.freezerPath) return null;
        return readFileSync(join(this.freezerPath, 'freezer.state'), 'utf8').trim() as 'FROZEN' | 'FREEZING' | 'THAWED';
      }
      const events = readKeyed(join(this.path, 'cgroup.events'));
      if (events.get('frozen') === 1) return 'FROZEN';
      return readFileSync(join(this.path, 'cgroup.freeze'), 'utf8').trim() === '1' ? 'FREEZING' : 'THAWED';
    } catch {
      return null;
    }
  }

  /** Freezes every process inside and waits (up to timeoutMs) until the kernel reports FROZEN. */
  async freeze(timeoutMs = 2000): Promise<void> {
    this.#writeFreezer(true);
    const deadline = Date.now() + timeoutMs;
    while (this.freezerState() !== 'FROZEN') {
      if (Date.now() > deadline) throw new Error(`cgroup ${this.relPath} did not freeze within ${timeoutMs} ms (state ${this.freezerState()})`);
      await sleep(10);
    }
  }

  /** Thaws the cgroup. Safe to call when it is not frozen or has no freezer. */
  thaw(): void {
    if (this.canFreeze()) this.#writeFreezer(false);
  }

  #writeFreezer(frozen: boolean): void {
    if (this.version === 'v1') {
      if (!this.freezerPath) throw new Error(`cgroup ${this.relPath} has no v1 freezer directory (create it with { freezer: true })`);
      writeFileSync(join(this.freezerPath, 'freezer.state'), frozen ? 'FROZEN' : 'THAWED');
    } else {
      writeFileSync(join(this.path, 'cgroup.freeze'), frozen ? '1' : '0');
    }
  }

  /** Relative CPU weight, 1..10000 in v2 terms (100 = default); mapped to cpu.shares (1024 = default) in v1. */
  setCpuWeight(weight: number): boolean {
    try {
      if (this.version === 'v2') {
        writeFileSync(join(this.path, 'cpu.weight'), String(Math.round(weight)));
        return true;
      }
      if (!this.cpuPath) return false;
      writeFileSync(join(this.cpuPath, 'cpu.shares'), String(Math.max(2, Math.round((weight * 1024) / 100))));
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Usage, peak, limit, OOM kills and RSS. Throws CgroupReadError when a file that every memory
   * cgroup has (usage, limit, the OOM counter's file) cannot be read: a missing file is a wrong path
   * or a removed cgroup, not a reading of 0.
   */
  readMemory(): MemoryReading {
    return readMemoryFiles(this.version, this.path);
  }

  /** Resets the high-water mark (v1 only; v2's memory.peak resets only by writing, on kernels that allow it). */
  resetPeak(): void {
    try {
      writeFileSync(join(this.path, this.version === 'v1' ? 'memory.max_usage_in_bytes' : 'memory.peak'), '0');
    } catch {
      // Older v2 kernels have no writable memory.peak: the peak then covers the cgroup's lifetime.
    }
  }

  /** PIDs in this cgroup and every descendant. */
  pids(): number[] {
    return collectPids(this.path);
  }

  /** SIGKILLs every process inside, then removes the directories bottom-up. Idempotent. */
  async remove(timeoutMs = 5000): Promise<void> {
    // A frozen process cannot act on SIGKILL: thaw first, or it would never exit.
    try {
      this.thaw();
    } catch {
      // Already removed.
    }
    await removeTree(this.path, timeoutMs);
    if (this.cpuPath) await removeTree(this.cpuPath, timeoutMs);
    if (this.freezerPath) await removeTree(this.freezerPath, timeoutMs);
    if (this.cpusetPath) await removeTree(this.cpusetPath, timeoutMs);
  }
}
