// The project's reference agent as a target: its YAML config from the variant, the bundled agent
// (plain JavaScript, no TypeScript loader in its cgroup) started by the supervisor in a memory cgroup.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Cgroup } from '../cgroup/index.js';
import { createSampler, type Sampler } from '../sample/index.js';
import { agentConfigYaml, buildAgentConfig } from './agent-config.js';
import { AgentSupervisor, type AgentLauncher, type AgentReady } from './agent-supervisor.js';
import { registerTarget, type AgentTarget, type TargetContext } from './target.js';
import type { ReferenceAgent as ReferenceAgentSettings } from '../scenario/index.js';

/** The bundled agent entry; set once per run by the runner (bundling is slow and shared by variants). */
let agentBundle: string | null = null;
export function setReferenceAgentBundle(path: string): void {
  agentBundle = path;
}

/** Starts `node <bundle> <config>` and waits for its JSON ready line. */
export function referenceLauncher(bundle: string, configFile: string): AgentLauncher {
  return {
    async prepare() {
      return { file: process.execPath, args: [bundle, configFile], env: { ...process.env, NODE_OPTIONS: '' } };
    },
    ready(_child, onLine) {
      return new Promise<AgentReady>((resolve) => {
        onLine((line) => {
          if (!line.startsWith('{')) return;
          try {
            const msg = JSON.parse(line) as { event?: string; pid?: number; metrics?: string | null };
            if (msg.event === 'ready' && typeof msg.pid === 'number') resolve({ pid: msg.pid, metrics: msg.metrics ?? null });
          } catch {
            // Not the ready line.
          }
        });
      });
    },
  };
}

/** The agent's memory cgroup with the variant's limit and CPU weight; null without a cgroup host. */
export function agentCgroupFor(ctx: TargetContext, limitBytes: number, cpu: ReferenceAgentSettings['cpu']): Cgroup | null {
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

export function referenceTarget(agent: ReferenceAgentSettings, ctx: TargetContext): AgentTarget {
  const socket = join(ctx.tmpDir, `${ctx.variant}.r${ctx.rep}.sock`);
  const limitBytes = agent.memoryLimit;
  let cgroup: Cgroup | null = null;
  let supervisor: AgentSupervisor | null = null;
  let stopped = false;
  const key = agent.placement === 'disabled' ? null : agent.key ?? agent.keys[agent.placement];
  return {
    socket,
    limitBytes,
    async start() {
      if (!agentBundle) throw new Error('the reference agent bundle was not built (setReferenceAgentBundle)');
      mkdirSync(ctx.tmpDir, { recursive: true, mode: 0o755 });
      const cfg = buildAgentConfig(agent, {
        socket,
        kubeletUrl: ctx.sandbox.kubeletUrl,
        tokenFile: ctx.sandbox.tokenFile,
        caFile: ctx.sandbox.caFile,
      });
      const configFile = join(ctx.dir, 'agent.yaml');
      writeFileSync(configFile, agentConfigYaml(cfg));
      cgroup = agentCgroupFor(ctx, limitBytes, agent.cpu);
      supervisor = new AgentSupervisor({
        launcher: referenceLauncher(agentBundle, configFile),
        cgroup,
        limitBytes,
        cpu: { mode: agent.cpu.mode, nice: agent.cpu.nice },
        logFile: join(ctx.dir, 'agent.log'),
        startTimeoutMs: agent.startTimeout,
        backoff: { initialMs: agent.restart.initialBackoff, maxMs: agent.restart.maxBackoff, resetAfterMs: agent.restart.resetAfter },
        event: ctx.event,
        onDeath: ctx.onDeath,
        signal: ctx.signal,
      });
      await supervisor.start();
    },
    samplers(): Sampler[] {
      const sup = supervisor!;
      return [
        cgroup ? createSampler('cgroup-memory', { cgroup, pid: () => sup.pid(), limitBytes }) : createSampler('process-memory', { pid: () => sup.pid(), limitBytes }),
        createSampler('agent-metrics', { metricsUrl: () => sup.metricsUrl() }),
      ];
    },
    cgroup: () => cgroup,
    pid: () => supervisor?.pid() ?? null,
    get oomKills() {
      return supervisor?.oomKills ?? 0;
    },
    get restarts() {
      return supervisor?.restarts ?? 0;
    },
    downtimeMs: () => supervisor?.downtimeMs() ?? 0,
    peakBytes: () => (cgroup ? cgroup.readMemory().peakBytes : null),
    kill: (signal) => supervisor?.kill(signal),
    describe: () => ({ kind: 'reference', placement: agent.placement, key, binary: agentBundle ?? 'src/target/agent-entry.ts', version: 'attestorm reference agent' }),
    async stop() {
      if (stopped) return;
      stopped = true;
      await supervisor?.stop();
    },
  };
}

registerTarget('reference', referenceTarget);

