// The scenario's `isolation`: the agent alone on its CPUs, the runner and every pod it starts on the
// others (pods inherit the runner's cpuset when forked). Checked against the machine before anything
// starts; what was applied, or why not, goes into results.json.
import { readFileSync } from 'node:fs';
import { cpus as osCpus } from 'node:os';
import { join } from 'node:path';
import { createCpuset, effectiveCpus, formatCpuList, moveToCpuset, parseCpuList, parseSelfCgroup, unifiedMount, type CgroupHost } from '../cgroup/index.js';
import type { IsolationRecord } from '../contract/index.js';
import { ConfigError } from '../errors.js';
import type { Scenario } from './schema.js';

export interface CpusetPlan {
  agentCpus: string;
  otherCpus: string;
}

/** The CPUs the run may use: the runner's own cpuset, or every CPU when there is no cpuset hierarchy. */
function machineCpus(host: CgroupHost | null): number[] {
  const own = host?.cpusetBase ? effectiveCpus(host.cpusetBase) : [];
  return own.length ? own : osCpus().map((_, i) => i);
}

/**
 * The CPU lists to apply, checked against this machine (ConfigError naming the key and the CPUs it
 * lacks), plus the record for results.json. plan is null when isolation is off or cannot be applied.
 */
export function planIsolation(s: Scenario, host: CgroupHost | null, notHere: string | null): { plan: CpusetPlan | null; record: IsolationRecord | null } {
  const iso = s.isolation;
  if (!iso) return { plan: null, record: null };
  const have = machineCpus(host);
  const agent = parseCpuList(iso.agentCpus) ?? [];
  const problems: string[] = [];
  const missing = (list: number[]) => list.filter((c) => !have.includes(c));
  if (!agent.length) problems.push(`isolation.agentCpus must name at least one CPU, got "${iso.agentCpus}"`);
  if (missing(agent).length)
    problems.push(`isolation.agentCpus asks for CPU ${formatCpuList(missing(agent))}, but this machine offers CPUs ${formatCpuList(have)}`);
  const others = iso.otherCpus !== undefined ? (parseCpuList(iso.otherCpus) ?? []) : have.filter((c) => !agent.includes(c));
  if (iso.otherCpus !== undefined && missing(others).length)
    problems.push(`isolation.otherCpus asks for CPU ${formatCpuList(missing(others))}, but this machine offers CPUs ${formatCpuList(have)}`);
  if (!others.length)
    problems.push(`isolation.agentCpus "${iso.agentCpus}" leaves no CPU for the pods and the runner (this machine offers CPUs ${formatCpuList(have)})`);
  const overlap = others.filter((c) => agent.includes(c));
  if (overlap.length) problems.push(`isolation.otherCpus must not overlap isolation.agentCpus, both have CPU ${formatCpuList(overlap)}`);
  if (problems.length) throw new ConfigError(problems);
  const plan = { agentCpus: formatCpuList(agent), otherCpus: formatCpuList(others) };
  const why =
    notHere ??
    (host === null
      ? 'no writable cgroup hierarchy'
      : !host.cpusetBase
        ? 'no writable cpuset hierarchy (cgroup v1 cpuset, or v2 with the cpuset controller delegated)'
        : null);
  if (why) return { plan: null, record: { mode: 'cpuset', ...plan, applied: false, detail: `not applied: ${why}` } };
  return {
    plan,
    record: { mode: 'cpuset', ...plan, applied: true, detail: `agent on CPUs ${plan.agentCpus} alone; runner, pods and workers on CPUs ${plan.otherCpus}` },
  };
}

/**
 * Moves the runner (every thread) into attestorm/<runId>/harness pinned to the other CPUs, so each
 * pod it forks starts there. Returns the undo: back to the runner's own cpuset, which must happen
 * before the run's cgroups are removed (removal kills whatever is still inside).
 */
export function isolateRunner(host: CgroupHost, runId: string, plan: CpusetPlan): () => void {
  const base = host.cpusetBase!;
  // v1: the runner's cpuset is the base. v2: its one cgroup, which may be anywhere (a leaf beside the
  // run's cgroups, a service elsewhere in the tree); the base may not take processes back.
  const own = host.version === 'v2' ? join(unifiedMount(), parseSelfCgroup(readFileSync('/proc/self/cgroup', 'utf8')).get('') ?? '/') : base;
  const dir = createCpuset(host.version, base, join('attestorm', runId, 'harness'), plan.otherCpus);
  moveToCpuset(dir, process.pid);
  let undone = false;
  return () => {
    if (undone) return;
    undone = true;
    moveToCpuset(own, process.pid);
  };
}
