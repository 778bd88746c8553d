// Whether this machine can hold the worker processes a load asks for: memory, process/thread IDs
// (kernel.pid_max, kernel.threads-max, the pids cgroup) and file descriptors (RLIMIT_NOFILE,
// fs.file-max). Checked before any process starts, so a count the machine cannot hold is refused
// with the numbers instead of failing halfway through a fork storm or an accept loop.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inactiveFileBytes, readKeyed } from '../cgroup/index.js';
import { ConfigError } from '../errors.js';
import type { LoadClient } from './worker/messages.js';

/** What one process of each kind costs while a storm runs (measured here, see bench/README.md). */
export interface ProcessCost {
  /** Memory it makes the machine spend mid-storm (PSS), bytes. */
  memoryBytes: number;
  /** Kernel tasks (threads), each taking a PID. */
  threads: number;
}

const MiB = 1024 * 1024;

/**
 * Per worker, mid-storm: native 0.9 MiB PSS, h2 24.7–30.4 MiB (bench/load.ts); grpc-js loads
 * more code and keeps more per call than h2. A node process runs 7 threads (main, 4 V8 platform
 * workers, libuv's and the inspector's); the native worker is one thread.
 */
export const WORKER_COSTS: Readonly<Record<LoadClient, ProcessCost>> = {
  native: { memoryBytes: 1 * MiB, threads: 1 },
  h2: { memoryBytes: 30 * MiB, threads: 7 },
  'grpc-js': { memoryBytes: 40 * MiB, threads: 7 },
};

/** A pod process (node, merging its workers' seconds): ~60 MiB RSS, 7 threads. */
export const POD_PROCESS_COST: ProcessCost = { memoryBytes: 60 * MiB, threads: 7 };

/** Descriptors a node process holds besides one per worker or connection (stdio, epoll, pipes, libuv). */
export const BASE_DESCRIPTORS = 64;

/** The processes a load will start at most at once. */
export interface LoadPlanSize {
  client: LoadClient;
  /** Pod processes (storm, bystanders, a burst's wave). */
  pods: number;
  /** Worker processes in all. */
  workers: number;
  /** The most workers one pod process forks (it holds an IPC descriptor per worker). */
  maxWorkersPerPod: number;
  /**
   * The agent under test runs on this machine with this process's limits (the scenario runner
   * starts it): it holds a descriptor per connected worker.
   */
  agentHere?: boolean;
}

/** This machine's limits and current use; null where the kernel does not say. */
export interface HostCapacity {
  /** The least of MemAvailable and every enclosing memory cgroup's limit minus its non-cache usage. */
  memoryAvailableBytes: number | null;
  memorySource: string;
  /** Tasks (threads) running now, machine-wide (/proc/loadavg). */
  tasks: number | null;
  pidMax: number | null;
  threadsMax: number | null;
  /** The tightest pids cgroup around this process: its limit and current count; null without one. */
  pidsCgroup: { path: string; max: number; current: number } | null;
  /** RLIMIT_NOFILE of this process; node raises the soft limit to the hard one at start, so children get the hard one. */
  nofile: { soft: number; hard: number } | null;
  /** fs.file-max and descriptors allocated now (/proc/sys/fs/file-nr). */
  fileMax: number | null;
  filesAllocated: number | null;
}

const fmtMiB = (b: number) => `${(b / MiB).toFixed(0)} MiB`;

/** Every way the plan exceeds the host, each sentence naming the input, the rule and the numbers. */
export function capacityProblems(plan: LoadPlanSize, host: HostCapacity, what = 'load'): string[] {
  const problems: string[] = [];
  const w = WORKER_COSTS[plan.client];
  const shape = `${plan.pods} pod process${plan.pods === 1 ? '' : 'es'} and ${plan.workers} ${plan.client} worker${plan.workers === 1 ? '' : 's'}`;

  const memory = plan.workers * w.memoryBytes + plan.pods * POD_PROCESS_COST.memoryBytes;
  if (host.memoryAvailableBytes !== null && memory > host.memoryAvailableBytes) {
    problems.push(
      `${what}.workersPerPod: ${shape} need about ${fmtMiB(memory)} of memory (${fmtMiB(w.memoryBytes)} per worker, ${fmtMiB(POD_PROCESS_COST.memoryBytes)} per pod process), but ${fmtMiB(host.memoryAvailableBytes)} is available (${host.memorySource}); use fewer workers${plan.client === 'native' ? '' : ' or client: native (about 1 MiB per worker)'}`,
    );
  }

  const tasks = plan.workers * w.threads + plan.pods * POD_PROCESS_COST.threads;
  const taskLimits: string[] = [];
  if (host.tasks !== null && host.pidMax !== null && host.tasks + tasks > host.pidMax)
    taskLimits.push(`kernel.pid_max is ${host.pidMax} with ${host.tasks} tasks running`);
  if (host.tasks !== null && host.threadsMax !== null && host.tasks + tasks > host.threadsMax)
    taskLimits.push(`kernel.threads-max is ${host.threadsMax} with ${host.tasks} tasks running`);
  if (host.pidsCgroup && host.pidsCgroup.current + tasks > host.pidsCgroup.max)
    taskLimits.push(`the pids cgroup ${host.pidsCgroup.path} allows ${host.pidsCgroup.max} with ${host.pidsCgroup.current} in use`);
  if (taskLimits.length) {
    problems.push(
      `${what}.workersPerPod: ${shape} need ${tasks} process/thread IDs (${w.threads} per worker, ${POD_PROCESS_COST.threads} per pod process), but ${taskLimits.join('; ')}; use fewer workers${plan.client === 'native' ? '' : ' or client: native (one thread per worker)'}`,
    );
  }

  if (host.nofile) {
    const perPod = plan.maxWorkersPerPod + BASE_DESCRIPTORS;
    if (perPod > host.nofile.hard) {
      problems.push(
        `${what}.workersPerPod: a pod process of ${plan.maxWorkersPerPod} workers holds about ${perPod} file descriptors (one per worker, ${BASE_DESCRIPTORS} of its own), but RLIMIT_NOFILE allows ${host.nofile.hard} (hard limit; ulimit -Hn); use more pods with fewer workers each, or raise the limit`,
      );
    }
    const agent = plan.workers + BASE_DESCRIPTORS;
    if (plan.agentHere && agent > host.nofile.hard) {
      problems.push(
        `${what}.workersPerPod: the agent under test holds a connection per calling worker, about ${agent} file descriptors for ${plan.workers} workers, but RLIMIT_NOFILE allows ${host.nofile.hard} (hard limit; ulimit -Hn), which it inherits here; use fewer workers or raise the limit`,
      );
    }
  }
  // Each worker: its IPC pair and its connection's two ends (one in the agent), machine-wide.
  const files = plan.workers * 4;
  if (host.fileMax !== null && host.filesAllocated !== null && host.filesAllocated + files > host.fileMax) {
    problems.push(
      `${what}.workersPerPod: ${plan.workers} workers open about ${files} file descriptors machine-wide (4 per worker), but fs.file-max is ${host.fileMax} with ${host.filesAllocated} allocated; use fewer workers or raise fs.file-max`,
    );
  }
  return problems;
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

function readInt(path: string): number | null {
  const t = readText(path)?.trim();
  return t !== undefined && /^\d+$/.test(t) ? Number(t) : null;
}

/** MemAvailable from /proc/meminfo text, bytes. */
export function parseMemAvailable(text: string): number | null {
  const m = /^MemAvailable:\s+(\d+)\s*kB/m.exec(text);
  return m ? Number(m[1]) * 1024 : null;
}

/** The total task count from /proc/loadavg text ("0.5 0.4 0.3 2/345 999"). */
export function parseLoadavgTasks(text: string): number | null {
  const m = /\s\d+\/(\d+)\s/.exec(text);
  return m ? Number(m[1]) : null;
}

/** Soft and hard "Max open files" from /proc/<pid>/limits text. */
export function parseNofile(text: string): { soft: number; hard: number } | null {
  const m = /^Max open files\s+(\d+|unlimited)\s+(\d+|unlimited)/m.exec(text);
  if (!m) return null;
  const n = (s: string) => (s === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(s));
  return { soft: n(m[1]!), hard: n(m[2]!) };
}

/** Controller → path of /proc/self/cgroup text (v1 lines name their controllers; v2's line has none). */
function selfCgroups(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line.trim());
    if (m) for (const c of m[1]!.split(',')) out.set(c, m[2]!);
  }
  return out;
}

/** The cgroup directory of `path` and each of its parents, innermost first. */
function enclosing(base: string, path: string): string[] {
  const parts = path.split('/').filter(Boolean);
  return Array.from({ length: parts.length + 1 }, (_, i) => join(base, ...parts.slice(0, parts.length - i)));
}

function memoryHeadroom(root: string, cg: Map<string, string>): { bytes: number; dir: string } | null {
  let best: { bytes: number; dir: string } | null = null;
  const consider = (dir: string, limit: number | null, usage: number | null, cache: number) => {
    // v1 reports an unlimited cgroup as a huge number; v2 as "max" (readInt gives null).
    if (limit === null || usage === null || limit >= 2 ** 60) return;
    const bytes = Math.max(0, limit - Math.max(0, usage - cache));
    if (!best || bytes < best.bytes) best = { bytes, dir };
  };
  const v1 = cg.get('memory');
  if (v1 !== undefined) {
    for (const dir of enclosing(join(root, 'memory'), v1)) {
      const inactive = inactiveFileBytes('v1', readKeyed(join(dir, 'memory.stat'))) ?? 0;
      consider(dir, readInt(join(dir, 'memory.limit_in_bytes')), readInt(join(dir, 'memory.usage_in_bytes')), inactive);
    }
  }
  const v2 = cg.get('');
  if (v2 !== undefined && v1 === undefined) {
    for (const dir of enclosing(root, v2)) {
      const inactive = inactiveFileBytes('v2', readKeyed(join(dir, 'memory.stat'))) ?? 0;
      consider(dir, readInt(join(dir, 'memory.max')), readInt(join(dir, 'memory.current')), inactive);
    }
  }
  return best;
}

function pidsHeadroom(root: string, cg: Map<string, string>): HostCapacity['pidsCgroup'] {
  let best: HostCapacity['pidsCgroup'] = null;
  const v1 = cg.get('pids');
  const dirs = v1 !== undefined ? enclosing(join(root, 'pids'), v1) : cg.has('') ? enclosing(root, cg.get('')!) : [];
  for (const dir of dirs) {
    const max = readInt(join(dir, 'pids.max'));
    const current = readInt(join(dir, 'pids.current'));
    if (max === null || current === null) continue;
    if (!best || max - current < best.max - best.current) best = { path: dir, max, current };
  }
  return best;
}

/** Reads this machine's capacity now. Paths are parameters so fixtures can stand in for /proc and /sys. */
export function readHostCapacity(opts: { proc?: string; cgroupRoot?: string } = {}): HostCapacity {
  const proc = opts.proc ?? '/proc';
  const root = opts.cgroupRoot ?? '/sys/fs/cgroup';
  const cg = selfCgroups(readText(join(proc, 'self', 'cgroup')) ?? '');
  const memAvailable = parseMemAvailable(readText(join(proc, 'meminfo')) ?? '');
  const cgMemory = memoryHeadroom(root, cg);
  let memoryAvailableBytes = memAvailable;
  let memorySource = 'MemAvailable in /proc/meminfo';
  if (cgMemory && (memoryAvailableBytes === null || cgMemory.bytes < memoryAvailableBytes)) {
    memoryAvailableBytes = cgMemory.bytes;
    memorySource = `the limit of the memory cgroup ${cgMemory.dir} less its usage`;
  }
  const fileNr = (readText(join(proc, 'sys', 'fs', 'file-nr')) ?? '').trim().split(/\s+/).map(Number);
  return {
    memoryAvailableBytes,
    memorySource,
    tasks: parseLoadavgTasks(readText(join(proc, 'loadavg')) ?? ''),
    pidMax: readInt(join(proc, 'sys', 'kernel', 'pid_max')),
    threadsMax: readInt(join(proc, 'sys', 'kernel', 'threads-max')),
    pidsCgroup: pidsHeadroom(root, cg),
    nofile: parseNofile(readText(join(proc, 'self', 'limits')) ?? ''),
    fileMax: fileNr.length >= 3 && Number.isFinite(fileNr[2]) ? fileNr[2]! : null,
    filesAllocated: fileNr.length >= 3 && Number.isFinite(fileNr[0]) ? fileNr[0]! : null,
  };
}

/** Refuses, with a ConfigError listing every limit exceeded, a load this machine cannot hold. */
export function checkLoadCapacity(plan: LoadPlanSize, what = 'load', host: HostCapacity = readHostCapacity()): void {
  const problems = capacityProblems(plan, host, what);
  if (problems.length) throw new ConfigError(problems);
}

/**
 * The processes a load's options start at once: the storm's and the bystanders' pods and workers,
 * plus `extra` workers (a burst's wave, in pods of workersPerPod).
 */
export function loadPlanSize(
  opts: { client: LoadClient; pods: number; workersPerPod: number; bystanders?: { pods: number; workersPerPod: number } | undefined },
  extra: { workers?: number; agentHere?: boolean } = {},
): LoadPlanSize {
  const extraWorkers = extra.workers ?? 0;
  const bys = opts.bystanders;
  return {
    client: opts.client,
    pods: opts.pods + (bys?.pods ?? 0) + Math.ceil(extraWorkers / opts.workersPerPod),
    workers: opts.pods * opts.workersPerPod + (bys ? bys.pods * bys.workersPerPod : 0) + extraWorkers,
    maxWorkersPerPod: Math.max(opts.workersPerPod, bys?.workersPerPod ?? 0),
    ...(extra.agentHere ? { agentHere: true } : {}),
  };
}
