// A real spire-agent as the agent under test, with a spire-server of its own per repetition: the
// user's binaries, configs generated into the repetition's folder, an entry per sandbox pod while it
// runs, a fresh join token for every agent (re)start, the agent in the variant's memory cgroup under
// the same supervisor as the reference agent, ready once a real JWT-SVID is served.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Cgroup } from '../cgroup/index.js';
import type { VariantAgentRecord } from '../contract/index.js';
import { createSampler, type Sampler } from '../sample/index.js';
import type { SandboxPod } from '../sandbox/index.js';
import type { SpireAgent } from '../scenario/index.js';
import {
  asGroup,
  findSpireBinaries,
  freeLoopbackPorts,
  kubeletAccessFor,
  mergeHcl,
  limiterEnabled,
  prepareSpireAgent,
  probeSvid,
  quoteLog,
  spireHeapProfileSampler,
  spireAgentLauncher,
  spireAgentGrammar,
  spireVersion,
  startSpireServer,
  versionOf,
  type HclTree,
  type SpireAgentLauncher,
  type SpireRateLimits,
  type SpireServer,
} from '../spire/index.js';
import { AgentSupervisor } from './agent-supervisor.js';
import { registerTarget, type AgentTarget, type TargetContext } from './target.js';
import { agentCgroupFor } from './target-reference.js';

/** The OS group of the readiness probe: selected by an entry of its own, never a pod's group. */
export const SPIRE_PROBE_GID = 65_520;
const TRUST_DOMAIN = 'attestorm.test';
// Entries reach the agent after the server's cache reload (5 s) and the agent's sync (5 s).
const SVID_TIMEOUT_MS = 60_000;
// Pods starting together are registered in one `entry create` batch.
const REGISTER_DELAY_MS = 200;
// Processes carrying the run's ID are what `attestorm cleanup` kills when their owner died.
const RUN_ENV = 'ATTESTORM_RUN_ID';

/**
 * Keeps the server's entries in step with the sandbox, as a controller would: an entry per pod as
 * it starts, deleted when it ends; changes close together go in one batch, one batch at a time.
 */
class PodRegistrar {
  readonly #added: SandboxPod[] = [];
  readonly #ended: string[] = [];
  #timer: NodeJS.Timeout | null = null;
  #chain: Promise<void> = Promise.resolve();
  registered = 0;
  constructor(
    private readonly server: SpireServer,
    private readonly event: TargetContext['event'],
  ) {}

  add = (pod: SandboxPod): void => {
    this.#added.push(pod);
    this.#schedule();
  };

  end = (pod: SandboxPod): void => {
    this.#ended.push(pod.uid);
    this.#schedule();
  };

  #schedule(): void {
    this.#timer ??= setTimeout(() => void this.flush(), REGISTER_DELAY_MS);
  }

  flush(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    const added = this.#added.splice(0);
    const ended = this.#ended.splice(0);
    if (added.length === 0 && ended.length === 0) return this.#chain;
    this.#chain = this.#chain.then(async () => {
      try {
        if (added.length > 0) {
          const n = await this.server.registerPods(added.map((p) => ({ uid: p.uid, name: p.name, namespace: p.namespace })));
          this.registered += n;
          this.event('note', `spire: ${n} pod entries created (${this.server.registeredPods} live)`);
        }
        if (ended.length > 0) {
          const n = await this.server.unregisterPods(ended);
          this.event('note', `spire: ${n} entries of ended pods deleted (${this.server.registeredPods} live)`);
        }
      } catch (err) {
        this.event('note', `spire: updating entries (${added.length} new pods, ${ended.length} ended) failed: ${(err as Error).message}`);
      }
    });
    return this.#chain;
  }

  close(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#added.length = 0;
    this.#ended.length = 0;
    return this.#chain;
  }
}

export function spireTarget(agent: SpireAgent, ctx: TargetContext): AgentTarget {
  const base = join(ctx.tmpDir, `${ctx.variant}.r${ctx.rep}`);
  const socket = join(base, 'agent', 'workload', 'api.sock');
  const limitBytes = agent.memoryLimit;
  // SPIRE treats 0 as "no limit"; leave such keys out.
  const rateLimits: SpireRateLimits = Object.fromEntries(Object.entries(agent.rateLimits ?? {}).filter(([, v]) => typeof v === 'number' && v > 0));
  const limited = limiterEnabled(rateLimits);
  let binary = 'spire-agent';
  let version = 'unknown';
  let server: SpireServer | null = null;
  let registrar: PodRegistrar | null = null;
  let launcher: SpireAgentLauncher | null = null;
  let supervisor: AgentSupervisor | null = null;
  let cgroup: Cgroup | null = null;
  let stopping: Promise<void> | null = null;
  // SPIRE's pprof listener (profiling_port) when heap profiles are asked for.
  let profilingPort: number | null = null;

  const target: AgentTarget & { readonly joinTokens: number } = {
    socket,
    limitBytes,
    async start() {
      const bins = findSpireBinaries(agent.binDir !== undefined ? { binDir: agent.binDir } : {});
      binary = bins.agent;
      version = await spireVersion(bins.agent);
      // The preflight refused settings this release lacks; the grammar keeps the written config to it.
      const grammar = spireAgentGrammar(versionOf(bins.agent, version));
      const serverVersion = await spireVersion(bins.server);
      mkdirSync(base, { recursive: true, mode: 0o755 });
      server = await startSpireServer({
        binary: bins.server,
        dir: join(base, 'server'),
        outDir: ctx.dir,
        trustDomain: TRUST_DOMAIN,
        startTimeoutMs: agent.startTimeout,
        extraConfig: agent.extraServerConfig as HclTree,
        env: { [RUN_ENV]: ctx.runId },
      });
      ctx.event('note', `spire-server ${serverVersion} ready on 127.0.0.1:${server.port} (${bins.server})`);
      registrar = new PodRegistrar(server, ctx.event);
      ctx.sandbox.on('pod-start', registrar.add);
      ctx.sandbox.on('pod-end', registrar.end);
      for (const pod of ctx.sandbox.pods()) registrar.add(pod);
      await registrar.flush();
      const probeId = await server.registerGroup(SPIRE_PROBE_GID);
      let extraConfig = agent.extraAgentConfig as HclTree;
      if (agent.heapProfiles !== undefined) {
        [profilingPort] = (await freeLoopbackPorts(1)) as [number];
        extraConfig = mergeHcl({ agent: { profiling_enabled: true, profiling_port: profilingPort } }, extraConfig);
      }
      const plan = await prepareSpireAgent({
        binary: bins.agent,
        trustDomain: TRUST_DOMAIN,
        serverPort: server.port,
        bundlePem: await server.bundlePem(),
        dir: join(base, 'agent'),
        outDir: ctx.dir,
        kubelet: kubeletAccessFor(ctx.sandbox.kubeletUrl, { caFile: ctx.sandbox.caFile, tokenFile: ctx.sandbox.tokenFile }),
        rateLimits,
        k8s: { pollRetryIntervalMs: agent.k8s.pollInterval, maxPollAttempts: agent.k8s.maxPollAttempts },
        extraConfig,
        env: { [RUN_ENV]: ctx.runId },
        grammar,
        limiterPlacement: agent.limiterPlacement,
      });
      const logFile = join(ctx.dir, 'agent.log');
      cgroup = agentCgroupFor(ctx, limitBytes, agent.cpu);
      launcher = spireAgentLauncher(plan, server, logFile);
      supervisor = new AgentSupervisor({
        launcher,
        cgroup,
        limitBytes,
        cpu: { mode: agent.cpu.mode, nice: agent.cpu.nice },
        logFile,
        startTimeoutMs: agent.startTimeout,
        backoff: { initialMs: agent.restart.initialBackoff, maxMs: agent.restart.maxBackoff, resetAfterMs: agent.restart.resetAfter },
        event: ctx.event,
        onDeath: ctx.onDeath,
        signal: ctx.signal,
      });
      try {
        await supervisor.start();
      } catch (err) {
        // The supervisor names the log; SPIRE's own words say why (a bad key, a refused token).
        if (err instanceof Error && !err.message.includes('Last lines of')) err.message += quoteLog(logFile);
        throw err;
      }
      // /ready says the agent is up; only a served SVID says entries have reached it.
      const got = await probeSvid({ spawn: asGroup(SPIRE_PROBE_GID), label: `the readiness probe (gid ${SPIRE_PROBE_GID})`, socket, timeoutMs: SVID_TIMEOUT_MS });
      if (got.spiffeId !== probeId) ctx.event('note', `spire: the probe received ${got.spiffeId}, expected ${probeId}`);
      ctx.event('note', `spire: first JWT-SVID served ${got.afterMs} ms after the agent was ready (${got.attempts} attempts)`);
    },
    samplers(): Sampler[] {
      const sup = supervisor!;
      return [
        cgroup ? createSampler('cgroup-memory', { cgroup, pid: () => sup.pid(), limitBytes }) : createSampler('process-memory', { pid: () => sup.pid(), limitBytes }),
        createSampler('spire-metrics', { metricsUrl: () => sup.metricsUrl() }),
        ...(agent.heapProfiles !== undefined && profilingPort !== null
          ? [spireHeapProfileSampler({ port: () => (sup.pid() === null ? null : profilingPort), dir: ctx.dir, intervalMs: agent.heapProfiles })]
          : []),
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
    /** Join tokens issued: one per agent start. */
    get joinTokens() {
      return launcher?.tokens.length ?? 0;
    },
    downtimeMs: () => supervisor?.downtimeMs() ?? 0,
    peakBytes: () => (cgroup ? cgroup.readMemory().peakBytes : null),
    // A fault's kill goes through the supervisor: recorded as such, then restarted with a new token.
    kill: (signal) => supervisor?.kill(signal),
    describe: (): VariantAgentRecord => ({
      kind: 'spire',
      placement: limited ? agent.limiterPlacement : 'disabled',
      key: limited ? (agent.limiterPlacement === 'pre-attestation' ? 'pod-uid' : 'selector-set') : null,
      binary,
      version,
    }),
    stop() {
      stopping ??= (async () => {
        if (registrar) {
          ctx.sandbox.off('pod-start', registrar.add);
          ctx.sandbox.off('pod-end', registrar.end);
        }
        try {
          await supervisor?.stop();
        } finally {
          await registrar?.close();
          await server?.close();
        }
      })();
      return stopping;
    },
  };
  return target;
}

registerTarget('spire', spireTarget);
