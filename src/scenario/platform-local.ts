// The local platform: every repetition in a sandbox on this machine (pods as cgroups, the kubelet
// emulator, agents in memory cgroups of their own, or an RSS watchdog where there are none).
import { detectCgroupHost, type CgroupHost } from '../cgroup/index.js';
import { burstProblems, faultProblems, faultScheduleProblems } from '../fault/index.js';
import { MAX_WORKERS_TOTAL } from '../load/index.js';
import { targetKind } from '../target/index.js';
import type { AgentHost, Platform } from './platform.js';
import type { Scenario } from './schema.js';
import { runVariant } from './variant-run.js';

/**
 * Faults a variant's agent cannot take here (no cgroup to squeeze, no pid to kill), faults after
 * the load's end and bursts past the generator's process cap: every problem, once each.
 */
export function localFaultProblems(s: Scenario): string[] {
  if (!s.faults.length) return [];
  const { host, reason } = detectCgroupHost();
  const problems = [...faultScheduleProblems(s.faults, s.duration), ...burstProblems(s.faults, s.load.pods * s.load.workersPerPod, MAX_WORKERS_TOTAL)];
  for (const v of s.variants) problems.push(...faultProblems(s.faults, targetKind(v.agent.kind).faults(v.name, v.agent, host, reason)));
  return [...new Set(problems)];
}

function localAgentHost(s: Scenario): AgentHost {
  // Agents someone else runs need no cgroup of this machine's.
  if (s.variants.every((v) => !targetKind(v.agent.kind).started)) return { host: null, reason: 'external agents only', note: null, isolationRefusal: null };
  const { host, reason } = detectCgroupHost();
  return { host, reason, note: host ? null : `agent OOMs are emulated by an RSS watchdog: ${reason}`, isolationRefusal: null };
}

export const localPlatform: Platform = {
  record: { name: 'local' },
  loadHere: true,
  problems: localFaultProblems,
  agentHost: localAgentHost,
  measurement: (host: CgroupHost | null, cpuShare: string) => ({
    cgroupVersion: host?.version ?? null,
    oomFidelity: host ? 'cgroup-oom' : 'emulated-oom',
    // The sandbox decides whether pods get real cgroups; the first one's fidelity replaces this.
    podFidelity: host ? 'cgroup-pods' : 'uid-only',
    cpuShare,
  }),
  runRepetition: runVariant,
};
