// What every agent the harness starts has in common (reference, spire): a memory cgroup with the
// variant's limit, CPU weight and pinned CPUs; a supervisor that restarts it as a kubelet would; its
// cgroup and socket removed at the end.
import { rmSync } from 'node:fs';
import { Cgroup } from '../cgroup/index.js';
import { AgentSupervisor, type AgentLauncher } from './agent-supervisor.js';
import type { CpuShare } from './common-schema.js';
import type { TargetContext } from './target.js';

/** The started-agent settings of a variant (common-schema's startedAgentShape, parsed). */
export interface StartedAgentSettings {
  memoryLimit: number;
  cpu: CpuShare;
  restart: { initialBackoff: number; maxBackoff: number; resetAfter: number };
  startTimeout: number;
}

/** The agent's memory cgroup with the variant's limit and CPU weight; null without a cgroup host. */
export function agentCgroupFor(ctx: TargetContext, limitBytes: number, cpu: CpuShare): Cgroup | null {
  if (!ctx.host) return null;
  const faults = ctx.faultControls === true;
  const cg = Cgroup.create(ctx.host, `attestorm/${ctx.runId}/agent-${ctx.variant}-r${ctx.rep}`, {
    cpu: cpu.mode === 'cgroup' || faults,
    freezer: faults,
    ...(ctx.agentCpus !== undefined ? { cpus: ctx.agentCpus } : {}),
  });
  if (ctx.agentCpus !== undefined) ctx.event('note', `agent pinned to CPUs ${ctx.agentCpus} (cpuset)`);
  const { swapLimited } = cg.setMemoryLimit(limitBytes);
  if (!swapLimited) ctx.event('note', 'swap is not limited for the agent cgroup (no swap accounting): it could swap instead of being OOM-killed');
  if (cpu.mode === 'cgroup') {
    // The weight must hold at every level where the agent's subtree meets the pods' subtrees.
    const applied = cg.setCpuWeight(cpu.weight) && Cgroup.create(ctx.host, `attestorm/${ctx.runId}`, { cpu: true }).setCpuWeight(cpu.weight);
    ctx.event('note', applied ? `agent cpu weight ${cpu.weight}` : `agent cpu weight ${cpu.weight} could NOT be applied (no writable cpu controller)`);
  }
  cg.resetPeak();
  return cg;
}

/** Removes the cgroup and socket of an agent the harness started, once everything has been read. */
export async function releaseStartedAgent(cg: Cgroup | null, socket: string): Promise<void> {
  if (cg) await cg.remove().catch((err: Error) => process.stderr.write(`attestorm: cannot remove the agent cgroup ${cg.path}: ${err.message}\n`));
  rmSync(socket, { force: true });
}

/** The supervisor of a started agent: its cgroup, log, start timeout and kubelet-like back-off. */
export function superviseStartedAgent(
  agent: StartedAgentSettings,
  ctx: TargetContext,
  launcher: AgentLauncher,
  cgroup: Cgroup | null,
  logFile: string,
): AgentSupervisor {
  return new AgentSupervisor({
    launcher,
    cgroup,
    limitBytes: agent.memoryLimit,
    cpu: { mode: agent.cpu.mode, nice: agent.cpu.nice },
    logFile,
    startTimeoutMs: agent.startTimeout,
    backoff: { initialMs: agent.restart.initialBackoff, maxMs: agent.restart.maxBackoff, resetAfterMs: agent.restart.resetAfter },
    event: ctx.event,
    onDeath: ctx.onDeath,
    signal: ctx.signal,
  });
}
