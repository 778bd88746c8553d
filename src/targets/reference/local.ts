// The project's reference agent as a target: its YAML config from the variant, the bundled agent
// (plain JavaScript, no TypeScript loader in its cgroup) started by the supervisor in a memory cgroup;
// or, where the variant names a binDir, the attestorm-agent program there (a build of another
// checkout, or a wrapper of this bundle) started the same way.
import { accessSync, constants, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Cgroup } from '../../cgroup/index.js';
import { createSampler, type Sampler } from '../../sample/index.js';
import { bundleSpec, type BundleSpec } from '../../util/index.js';
import { memorySampler } from '../memory-sampler.js';
import { agentCgroupFor, releaseStartedAgent, superviseStartedAgent } from '../started-agent.js';
import type { AgentLauncher, AgentReady, AgentSupervisor } from '../agent-supervisor.js';
import type { AgentTarget, TargetContext } from '../target.js';
import { agentConfigYaml, buildAgentConfig } from './agent-config.js';
import { referenceLimiter } from './limiter.js';
import { REFERENCE_AGENT_PROGRAM, type ReferenceAgent } from './schema.js';

/** The program the reference agent runs as, relative to the project. */
const AGENT_ENTRY = 'src/targets/agent-entry.ts';
export const REFERENCE_AGENT_BUNDLE: BundleSpec = { entry: AGENT_ENTRY };

/** Bundles the agent to plain JavaScript, once per run: bundling is slow and shared by every repetition. */
export function bundleReferenceAgent(): Promise<string> {
  return bundleSpec(REFERENCE_AGENT_BUNDLE);
}

/** The program a binDir variant runs. */
export const referenceProgram = (binDir: string): string => join(binDir, REFERENCE_AGENT_PROGRAM);

/** Why `binDir` cannot run as a reference agent (no executable attestorm-agent in it); null when it can. */
export function referenceProgramProblem(binDir: string, where: string): string | null {
  const program = referenceProgram(binDir);
  try {
    if (!statSync(program).isFile()) return `${where}binDir ${binDir}: ${program} is not a file`;
    accessSync(program, constants.X_OK);
    return null;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return `${where}binDir ${binDir}: ${code === 'ENOENT' ? `no ${REFERENCE_AGENT_PROGRAM} in it` : `${program} is not executable (${code})`}; the folder must hold the program to run`;
  }
}

/**
 * Starts `node <bundle> <config>` (or `<binDir>/attestorm-agent <config>`, told where the bundle
 * and this Node are) and waits for its JSON ready line.
 */
export function referenceLauncher(bundle: string, configFile: string, binDir?: string): AgentLauncher {
  return {
    async prepare() {
      const env = { ...process.env, NODE_OPTIONS: '' };
      if (binDir === undefined) return { file: process.execPath, args: [bundle, configFile], env };
      return { file: referenceProgram(binDir), args: [configFile], env: { ...env, ATTESTORM_AGENT_BUNDLE: bundle, ATTESTORM_NODE: process.execPath } };
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

/** The reference agent of one repetition; `agentBundle` comes from bundleReferenceAgent(). */
export function referenceTarget(agent: ReferenceAgent, ctx: TargetContext, agentBundle: string | undefined): AgentTarget {
  const socket = join(ctx.tmpDir, `${ctx.variant}.r${ctx.rep}.sock`);
  const limitBytes = agent.memoryLimit;
  let cgroup: Cgroup | null = null;
  let supervisor: AgentSupervisor | null = null;
  let stopped = false;
  return {
    socket,
    limitBytes,
    async start() {
      if (!agentBundle) throw new Error('the reference agent bundle was not built (prepareTargets)');
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
      supervisor = superviseStartedAgent(agent, ctx, referenceLauncher(agentBundle, configFile, agent.binDir), cgroup, join(ctx.dir, 'agent.log'));
      await supervisor.start();
    },
    samplers(): Sampler[] {
      const sup = supervisor!;
      return [memorySampler(cgroup, () => sup.pid(), limitBytes), createSampler('agent-metrics', { metricsUrl: () => sup.metricsUrl() })];
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
    describe: () => ({
      kind: 'reference',
      ...referenceLimiter(agent),
      ...(agent.binDir === undefined
        ? { binary: agentBundle ?? AGENT_ENTRY, version: 'attestorm reference agent' }
        : { binary: referenceProgram(agent.binDir), version: `${REFERENCE_AGENT_PROGRAM} from ${agent.binDir}` }),
    }),
    async stop() {
      if (stopped) return;
      stopped = true;
      await supervisor?.stop();
    },
    release: () => releaseStartedAgent(cgroup, socket),
  };
}
