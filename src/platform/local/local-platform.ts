// The local platform: every repetition in a sandbox on this machine (pods as cgroups, the kubelet
// emulator, agents in memory cgroups of their own), the runner kept off the agents' CPUs when the
// scenario isolates them, and every cgroup and temp folder of the run removed at its end.
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { detectCgroupHost, removeIfEmpty, removeTree, type CgroupHost } from '../../cgroup/index.js';
import { TOPOLOGY_NODES, type IsolationRecord } from '../../contract/index.js';
import { ConfigError, PlatformError, type PreflightFailure } from '../../errors.js';
import { burstProblems, faultProblems, faultScheduleProblems } from '../../fault/index.js';
import { MAX_WORKERS_TOTAL } from '../../load/index.js';
import { createRunFolder, ensureRuntimeBase, loopbackFailures, otherPodIds, runTempDir, runtimeSocketFailure, type KubeletProbe } from '../../sandbox/index.js';
import { isolateRunner, planIsolation, type CpusetPlan, type Scenario } from '../../scenario/index.js';
import { prepareTargets, targetKind, type TargetMaker } from '../../targets/index.js';
import type { Platform, PlatformMeasurement, PlatformRun, PreparedRun } from '../platform.js';
import { runLocalRepetition } from './local-repetition.js';

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

/** localFaultProblems as one ConfigError. */
export function validateFaults(s: Scenario): void {
  const problems = localFaultProblems(s);
  if (problems.length) throw new ConfigError(problems);
}

/** The cgroups this machine gives the scenario's agents: null when every agent is someone else's to run. */
function agentCgroups(s: Scenario): CgroupHost | null {
  // Agents someone else runs need no cgroup of this machine's.
  if (s.variants.every((v) => !targetKind(v.agent.kind).started)) return null;
  const { host, reason } = detectCgroupHost();
  // Without cgroups an agent's memory would be guessed by a watchdog and every pod would look the
  // same to it (one uid, no pod cgroup): a table of errors, not a comparison. Refused, saying how.
  if (!host) throw new PlatformError(`${NEEDS_CGROUPS}: ${reason}. ${wayToCgroups()}`);
  return host;
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

/** How the variants' agents share this machine's CPU, as results.json's environment says it. */
function cpuShareOf(s: Scenario, host: CgroupHost | null): string {
  const modes = s.variants
    .map((v) => targetKind(v.agent.kind).cpu(v.agent))
    .filter((c) => c !== null)
    .map((c) => (c.mode === 'cgroup' ? (host ? `cpu-weight ${c.weight}` : 'none (no cgroup)') : c.mode === 'nice' ? `nice ${c.nice}` : 'none'));
  return [...new Set(modes)].join(', ') || 'none';
}

function localMeasurement(host: CgroupHost | null, cpuShare: string): PlatformMeasurement {
  return {
    cgroupVersion: host?.version ?? null,
    oomFidelity: host ? 'cgroup-oom' : 'emulated-oom',
    // The sandbox decides whether pods get real cgroups; the first one's fidelity replaces this.
    podFidelity: host ? 'cgroup-pods' : 'uid-only',
    cpuShare,
    ...(host?.delegation ? { cgroupDelegation: { kind: host.delegation.kind, base: host.delegation.base, detail: host.delegation.detail } } : {}),
  };
}

/** What a local run holds from its opening to its close. */
interface LocalRun {
  s: Scenario;
  runId: string;
  host: CgroupHost | null;
  targets: TargetMaker;
  /** The isolation planned; null once it could not be applied. */
  plan: CpusetPlan | null;
  planned: IsolationRecord | null;
  unisolate: () => void;
}

/** The run's temp folder for the agents' sockets: made new, traverse-only for pods of another uid. */
function openLocalRun(run: LocalRun): PlatformRun {
  const { s } = run;
  createRunFolder(runTempDir(run.runId), otherPodIds({ uidMode: s.load.uidMode, bystandersUid: s.load.bystanders?.uid }) !== null);
  return {
    start: () => isolate(run),
    runRepetition: (ctx) => runLocalRepetition({ ...ctx, host: run.host, targets: run.targets, ...(run.plan ? { agentCpus: run.plan.agentCpus } : {}) }),
    close: () => closeLocalRun(run),
  };
}

/** From here on the runner (and every pod it forks) stays off the agent's CPUs; a failure is said and recorded, not fatal. */
function isolate(run: LocalRun): IsolationRecord | null {
  if (!run.plan || !run.host) return null;
  try {
    run.unisolate = isolateRunner(run.host, run.runId, run.plan);
    return null;
  } catch (err) {
    run.plan = null;
    return { ...run.planned!, applied: false, detail: `not applied: cannot create or join the runner's cpuset: ${(err as Error).message}` };
  }
}

/** Back to the runner's own cpuset; the run's cgroups and temp folder removed: a finished run leaves none. */
async function closeLocalRun(run: LocalRun): Promise<void> {
  try {
    run.unisolate();
  } catch (err) {
    process.stderr.write(`attestorm: cannot move the runner back to its own cpuset: ${(err as Error).message}\n`);
  }
  const host = run.host;
  for (const base of [host?.memoryBase, host?.cpuBase, host?.freezerBase, host?.cpusetBase]) {
    if (!base) continue;
    await removeTree(join(base, 'attestorm', run.runId)).catch((err: Error) =>
      process.stderr.write(`attestorm: cannot remove the run's cgroups: ${err.message}\n`),
    );
    // The shared parent goes too once no other run uses it.
    removeIfEmpty(join(base, 'attestorm'));
  }
  rmSync(runTempDir(run.runId), { recursive: true, force: true });
}

/** A topology spreads pods over a cluster's nodes: this machine has one. */
export function localTopologyProblems(s: Scenario): string[] {
  if (s.cluster.topology === 'single-node') return [];
  return [
    `cluster.topology ${s.cluster.topology} places the agents, the storm and the bystanders on ${TOPOLOGY_NODES[s.cluster.topology]} nodes of a cluster: run it with --cluster kind:<name> (attestorm kind up --nodes ${TOPOLOGY_NODES[s.cluster.topology]}) or --context <ctx>, or drop cluster.topology to run it here`,
  ];
}

/**
 * What every local run needs of this machine, all of it checked at once: a runtime base only this
 * user controls (else UnsafePathError, exit 3), one that holds Unix sockets, loopback, the kubelet
 * emulator answering as each variant's agent will ask it, and the metrics address answering.
 */
async function checkLocalMachine(s: Scenario): Promise<PreflightFailure[]> {
  const base = ensureRuntimeBase();
  const failures: PreflightFailure[] = [];
  const sockets = await runtimeSocketFailure(base);
  if (sockets) failures.push(sockets);
  const kubelets: KubeletProbe[] = [];
  for (const v of s.variants) {
    const k = targetKind(v.agent.kind).kubelet(v.agent);
    if (k) kubelets.push({ tls: k.tls, token: k.token });
  }
  failures.push(...(await loopbackFailures({ kubelets, metrics: s.variants.some((v) => targetKind(v.agent.kind).started) })));
  return failures;
}

export const localPlatform: Platform = {
  record: { name: 'local' },
  loadSite: 'local',
  problems: (s) => [...localTopologyProblems(s), ...localFaultProblems(s)],
  checkMachine: checkLocalMachine,
  async prepare(s: Scenario): Promise<PreparedRun> {
    const host = agentCgroups(s);
    // Refused here, before anything starts, when the machine lacks the CPUs asked for.
    const isolation = planIsolation(s, host, null);
    // What each kind needs once per run (the reference agent's bundle), before the first repetition.
    const targets = await prepareTargets(s.variants.map((v) => v.agent));
    return {
      measurement: localMeasurement(host, cpuShareOf(s, host)),
      isolation: isolation.record,
      open: (runId) => openLocalRun({ s, runId, host, targets, plan: isolation.plan, planned: isolation.record, unisolate: () => {} }),
    };
  },
};
