// Which faults a target can take, decided before anything starts: each action needs a handle on the
// agent (its pid, its memory, CPU or freezer cgroup) or on the node (the kubelet emulator, the storm).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { CgroupHost } from '../cgroup/index.js';
import { formatDuration } from '../util/index.js';
import type { Fault, FaultAction } from './schema.js';

/** What one variant's target offers to the fault actions. */
export interface FaultCapabilities {
  /** The variant's name, for messages. */
  variant: string;
  /** 'builtin': the harness starts the agent; 'external': an agent someone else started; 'kind': a cluster. */
  kind: 'builtin' | 'external' | 'kind';
  /** A pid the harness may signal (kill, SIGSTOP). */
  pid: boolean;
  /** A memory cgroup whose limit the harness may change. */
  memoryCgroup: boolean;
  /** A CPU quota can be set (v1 cpu directory, v2 cpu.max). */
  cpuQuota: boolean;
  /** The cgroup can be frozen (v1 freezer directory, v2 cgroup.freeze). */
  freezer: boolean;
  /** The kubelet is the harness's emulator, whose faults can be switched. */
  kubeletEmulator: boolean;
  /** The storm's pods can be replaced and extra workers added. */
  storm: boolean;
  /** Why cgroups are missing for a built-in agent ("no writable cgroup memory hierarchy ..."). */
  noCgroupReason?: string;
}

/** A built-in agent: everything, with cgroup handles as far as the machine's hierarchy allows. */
export function builtinCapabilities(variant: string, host: CgroupHost | null, reason?: string): FaultCapabilities {
  return {
    variant,
    kind: 'builtin',
    pid: true,
    memoryCgroup: host !== null,
    // v2: the agent cgroup is created with +cpu delegated; a failed write is reported when the fault runs.
    cpuQuota: host !== null && (host.version === 'v2' || host.cpuBase !== null),
    freezer: host !== null && (host.version === 'v2' || !!host.freezerBase),
    kubeletEmulator: true,
    storm: true,
    ...(host === null && reason ? { noCgroupReason: reason } : {}),
  };
}

/**
 * An external agent: its pid and cgroup only as given. A v1 cgroup path names the memory hierarchy
 * only, so CPU quota and freezer need v2 (cpu.max and cgroup.freeze beside memory.current).
 */
export function externalCapabilities(variant: string, target: { pid?: number | null; cgroup?: string | null }): FaultCapabilities {
  const cg = target.cgroup ?? null;
  const v2 = cg !== null && existsSync(join(cg, 'memory.current'));
  return {
    variant,
    kind: 'external',
    pid: typeof target.pid === 'number',
    memoryCgroup: cg !== null,
    cpuQuota: v2 && existsSync(join(cg, 'cpu.max')),
    freezer: v2 && existsSync(join(cg, 'cgroup.freeze')),
    kubeletEmulator: true,
    storm: true,
  };
}

function lacks(c: FaultCapabilities, thing: string): string {
  if (c.kind === 'external') return `variant '${c.variant}' is an external agent without ${thing}`;
  if (c.kind === 'kind') return `variant '${c.variant}' runs in a kind cluster, which offers none`;
  return `variant '${c.variant}' has none on this machine${c.noCgroupReason ? ` (${c.noCgroupReason})` : ''}`;
}

/** What each action needs, as [satisfied?, "needs ..." text, the "without ..." noun]. */
function need(action: FaultAction, c: FaultCapabilities): [boolean, string, string] | null {
  switch (action) {
    case 'agent-kill':
      return [c.pid, "needs the agent's pid", 'one'];
    case 'agent-pause':
      return [c.freezer || c.pid, "needs the agent's freezer cgroup or its pid (SIGSTOP)", 'either'];
    case 'memory-squeeze':
      return [c.memoryCgroup, "needs the agent's memory cgroup", 'one'];
    case 'cpu-throttle':
      return [c.cpuQuota, "needs the agent's CPU cgroup (v1 cpu hierarchy or v2 cpu.max)", 'one'];
    case 'kubelet-latency':
    case 'kubelet-errors':
    case 'kubelet-down':
    case 'kubelet-stall':
      return [c.kubeletEmulator, "needs the harness's kubelet emulator", 'one'];
    case 'pod-churn':
    case 'burst':
      return [c.storm, "needs the harness's storm pods", 'them'];
    case 'slow-clients':
      return null;
  }
}

/**
 * Every fault the target cannot take, one message each:
 * "faults[2] (memory-squeeze): needs the agent's memory cgroup; variant 'x' is an external agent without one".
 * Empty when all can run. The runner turns a non-empty list into a ConfigError before anything starts.
 */
export function faultProblems(faults: readonly Fault[], capabilities: FaultCapabilities): string[] {
  const out: string[] = [];
  faults.forEach((f, i) => {
    const name = `faults[${i}] (${f.action})`;
    const n = need(f.action, capabilities);
    if (n && !n[0]) out.push(`${name}: ${n[1]}; ${lacks(capabilities, n[2])}`);
  });
  return out;
}

/**
 * Bursts that would take the generator past its process cap: the storm's own workers plus a burst's
 * (bursts never overlap, so one at a time). Same for every variant.
 */
export function burstProblems(faults: readonly Fault[], stormWorkers: number, maxWorkers: number): string[] {
  return faults.flatMap((f, i) =>
    f.action === 'burst' && stormWorkers + f.workers > maxWorkers
      ? [
          `faults[${i}] (burst): the storm's ${stormWorkers} workers plus ${f.workers} extra would be ${stormWorkers + f.workers} worker processes; at most ${maxWorkers} may run at once`,
        ]
      : [],
  );
}

/** Faults that would never run because they start at or after the end of the load phase (same for every variant). */
export function faultScheduleProblems(faults: readonly Fault[], loadDurationMs: number): string[] {
  return faults.flatMap((f, i) =>
    f.at >= loadDurationMs
      ? [
          `faults[${i}] (${f.action}): starts at ${formatDuration(f.at)}, at or after the end of the load phase (${formatDuration(loadDurationMs)}); it would never run`,
        ]
      : [],
  );
}
