// The local platform: every repetition in a sandbox on this machine (pods as cgroups, the kubelet
// emulator, agents in memory cgroups of their own, or an RSS watchdog where there are none).
import { existsSync } from 'node:fs';
import { detectCgroupHost, type CgroupHost } from '../cgroup/index.js';
import { PlatformError } from '../errors.js';
import { burstProblems, faultProblems, faultScheduleProblems } from '../fault/index.js';
import { MAX_WORKERS_TOTAL } from '../load/index.js';
import { targetKind } from '../targets/index.js';
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
  // Without cgroups an agent's memory would be guessed by a watchdog and every pod would look the
  // same to it (one uid, no pod cgroup): a table of errors, not a comparison. Refused, saying how.
  if (!host) throw new PlatformError(`${NEEDS_CGROUPS}: ${reason}. ${wayToCgroups()}`);
  return { host, reason, note: null, isolationRefusal: null };
}

const NEEDS_CGROUPS =
  "attestorm run measures each agent in a memory cgroup of its own (its peak, the kernel's OOM kill) and tells the storm's pods apart by their cgroups, and this process can make none";

/** What would work on this machine. */
function wayToCgroups(): string {
  const root = process.getuid?.() === 0;
  const systemd = existsSync('/run/systemd/system');
  if (root)
    return 'Run it where root may write the cgroup hierarchy (not a read-only /sys/fs/cgroup; in a container: --privileged or --cgroupns=private with a writable cgroup mount)';
  if (systemd)
    return 'Run it as root (sudo npm start), or from a login session whose systemd user manager runs (systemd-run --user --scope -p Delegate=yes true must succeed)';
  return 'Run it as root (sudo npm start), or on a cgroup v2 host with systemd, where it runs in a delegated user scope';
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
    ...(host?.delegation ? { cgroupDelegation: { kind: host.delegation.kind, base: host.delegation.base, detail: host.delegation.detail } } : {}),
  }),
  runRepetition: runVariant,
};
