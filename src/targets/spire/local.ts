// A real spire-agent as the agent under test, with a spire-server of its own per repetition: the
// user's binaries, configs generated into the repetition's folder, an entry per sandbox pod while it
// runs, a fresh join token for every agent (re)start, the agent in the variant's memory cgroup under
// the same supervisor as the reference agent, ready once a real JWT-SVID is served.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Cgroup } from '../../cgroup/index.js';
import type { VariantAgentRecord } from '../../contract/index.js';
import { createSampler, type Sampler } from '../../sample/index.js';
import {
  asGroup,
  inPod,
  findSpireBinaries,
  freeLoopbackPorts,
  kubeletAccessFor,
  mergeHcl,
  prepareSpireAgent,
  probeSvid,
  quoteLog,
  spireGoroutineProfileSampler,
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
} from '../../spire/index.js';
import type { AgentSupervisor } from '../agent-supervisor.js';
import { memorySampler } from '../memory-sampler.js';
import { agentCgroupFor, releaseStartedAgent, superviseStartedAgent } from '../started-agent.js';
import type { AgentTarget, TargetContext } from '../target.js';
import { spireLimiter, spireRateLimits } from './limiter.js';
import { PodRegistrar } from './pod-registrar.js';
import type { SpireAgent } from './schema.js';

/** The OS group of the readiness probe: selected by an entry of its own, never a pod's group. */
export const SPIRE_PROBE_GID = 65_520;
const TRUST_DOMAIN = 'attestorm.test';
// Entries reach the agent after the server's cache reload (5 s) and the agent's sync (5 s).
const SVID_TIMEOUT_MS = 60_000;
// Processes carrying the run's ID are what `attestorm cleanup` kills when their owner died.
const RUN_ENV = 'ATTESTORM_RUN_ID';

/** What one repetition's SPIRE holds once started; everything here is stopped by stopSpire. */
interface SpireParts {
  /** Where the server's and agent's data dirs go. */
  base: string;
  socket: string;
  rateLimits: SpireRateLimits;
  binary: string;
  version: string;
  server: SpireServer | null;
  registrar: PodRegistrar | null;
  launcher: SpireAgentLauncher | null;
  supervisor: AgentSupervisor | null;
  cgroup: Cgroup | null;
  /** SPIRE's pprof listener (profiling_port) when heap profiles are asked for. */
  profilingPort: number | null;
  /** The agent config grammar of the release found. */
  grammar: ReturnType<typeof spireAgentGrammar> | null;
}

export function spireTarget(agent: SpireAgent, ctx: TargetContext): AgentTarget {
  const base = join(ctx.tmpDir, `${ctx.variant}.r${ctx.rep}`);
  const p: SpireParts = {
    base,
    socket: join(base, 'agent', 'workload', 'api.sock'),
    rateLimits: spireRateLimits(agent.rateLimits),
    binary: 'spire-agent',
    version: 'unknown',
    server: null,
    registrar: null,
    launcher: null,
    supervisor: null,
    cgroup: null,
    profilingPort: null,
    grammar: null,
  };
  const limitBytes = agent.memoryLimit;
  let stopping: Promise<void> | null = null;
  const target: AgentTarget & { readonly joinTokens: number } = {
    socket: p.socket,
    limitBytes,
    start: () => startSpire(agent, ctx, p),
    samplers: () => spireSamplers(agent, ctx, p),
    cgroup: () => p.cgroup,
    pid: () => p.supervisor?.pid() ?? null,
    get oomKills() {
      return p.supervisor?.oomKills ?? 0;
    },
    get restarts() {
      return p.supervisor?.restarts ?? 0;
    },
    /** Join tokens issued: one per agent start. */
    get joinTokens() {
      return p.launcher?.tokens.length ?? 0;
    },
    downtimeMs: () => p.supervisor?.downtimeMs() ?? 0,
    peakBytes: () => (p.cgroup ? p.cgroup.readMemory().peakBytes : null),
    // A fault's kill goes through the supervisor: recorded as such, then restarted with a new token.
    kill: (signal) => p.supervisor?.kill(signal),
    describe: (): VariantAgentRecord => ({
      kind: 'spire',
      ...spireLimiter(p.rateLimits, agent.limiterPlacement),
      binary: p.binary,
      version: p.version,
      ...(Object.keys(agent.env).length ? { env: agent.env } : {}),
    }),
    podsServed: (signal) => podsServed(ctx, p, signal),
    stop: () => (stopping ??= stopSpire(ctx, p)),
    release: () => releaseStartedAgent(p.cgroup, p.socket),
  };
  return target;
}

/** The server, the pods' entries, the agent under its supervisor, and the first SVID it serves. */
async function startSpire(agent: SpireAgent, ctx: TargetContext, p: SpireParts): Promise<void> {
  const bins = findSpireBinaries(agent.binDir !== undefined ? { binDir: agent.binDir } : {});
  p.binary = bins.agent;
  p.version = await spireVersion(bins.agent);
  // The preflight refused settings this release lacks; the grammar keeps the written config to it.
  p.grammar = spireAgentGrammar(versionOf(bins.agent, p.version));
  const serverVersion = await spireVersion(bins.server);
  mkdirSync(p.base, { recursive: true, mode: 0o755 });
  const server = (p.server = await startSpireServer({
    binary: bins.server,
    dir: join(p.base, 'server'),
    outDir: ctx.dir,
    trustDomain: TRUST_DOMAIN,
    startTimeoutMs: agent.startTimeout,
    extraConfig: agent.extraServerConfig as HclTree,
    env: { ...agent.env, [RUN_ENV]: ctx.runId },
  }));
  ctx.event('note', `spire-server ${serverVersion} ready on 127.0.0.1:${server.port} (${bins.server})`);
  await registerPods(ctx, p, server);
  const probeId = await server.registerGroup(SPIRE_PROBE_GID);
  await startSpireAgent(agent, ctx, p, server, bins.agent);
  // /ready says the agent is up; only a served SVID says entries have reached it.
  const got = await probeSvid({
    spawn: asGroup(SPIRE_PROBE_GID),
    label: `the readiness probe (gid ${SPIRE_PROBE_GID})`,
    socket: p.socket,
    timeoutMs: SVID_TIMEOUT_MS,
  });
  if (got.spiffeId !== probeId) ctx.event('note', `spire: the probe received ${got.spiffeId}, expected ${probeId}`);
  ctx.event('note', `spire: first JWT-SVID served ${got.afterMs} ms after the agent was ready (${got.attempts} attempts)`);
}

/**
 * Before the calls start: every running pod's entry made and proved to have reached the agent by a
 * JWT-SVID fetched from inside that pod (its cgroup, its uid), as the cluster's generators do before
 * they report ready. Entries take ~10 s to arrive (server cache reload, agent sync); without this
 * wait the first seconds of a storm are PERMISSION_DENIED "no identity issued".
 */
async function podsServed(ctx: TargetContext, p: SpireParts, signal: AbortSignal): Promise<void> {
  await p.registrar?.flush();
  const pods = ctx.sandbox.pods();
  const started = Date.now();
  try {
    await Promise.all(
      pods.map((pod) =>
        probeSvid({
          spawn: inPod(ctx.sandbox, pod),
          label: `pod ${pod.name}`,
          socket: p.socket,
          timeoutMs: SVID_TIMEOUT_MS,
          signal,
        }),
      ),
    );
  } catch (err) {
    if (signal.aborted) return;
    throw err;
  }
  ctx.event('note', `spire: every pod (${pods.length}) was served a JWT-SVID before the calls started (waited ${Date.now() - started} ms)`);
}

/** An entry for every sandbox pod now, and for each one that starts from now on. */
async function registerPods(ctx: TargetContext, p: SpireParts, server: SpireServer): Promise<void> {
  const registrar = (p.registrar = new PodRegistrar(server, ctx.event));
  ctx.sandbox.on('pod-start', registrar.add);
  ctx.sandbox.on('pod-end', registrar.end);
  for (const pod of ctx.sandbox.pods()) registrar.add(pod);
  await registrar.flush();
}

/** The agent's config (limits, kubelet access, profiling), its cgroup, and its supervised start. */
async function startSpireAgent(agent: SpireAgent, ctx: TargetContext, p: SpireParts, server: SpireServer, binary: string): Promise<void> {
  let extraConfig = agent.extraAgentConfig as HclTree;
  if (agent.heapProfiles !== undefined || agent.goroutineProfiles !== undefined) {
    [p.profilingPort] = (await freeLoopbackPorts(1)) as [number];
    extraConfig = mergeHcl({ agent: { profiling_enabled: true, profiling_port: p.profilingPort } }, extraConfig);
  }
  const plan = await prepareSpireAgent({
    binary,
    trustDomain: TRUST_DOMAIN,
    serverPort: server.port,
    bundlePem: await server.bundlePem(),
    dir: join(p.base, 'agent'),
    outDir: ctx.dir,
    kubelet: kubeletAccessFor(ctx.sandbox.kubeletUrl, { caFile: ctx.sandbox.caFile, tokenFile: ctx.sandbox.tokenFile }),
    rateLimits: p.rateLimits,
    k8s: { pollRetryIntervalMs: agent.k8s.pollInterval, maxPollAttempts: agent.k8s.maxPollAttempts },
    extraConfig,
    env: { ...agent.env, [RUN_ENV]: ctx.runId },
    grammar: p.grammar!,
    limiterPlacement: agent.limiterPlacement,
  });
  const logFile = join(ctx.dir, 'agent.log');
  p.cgroup = agentCgroupFor(ctx, agent.memoryLimit, agent.cpu);
  p.launcher = spireAgentLauncher(plan, server, logFile);
  const supervisor = (p.supervisor = superviseStartedAgent(agent, ctx, p.launcher, p.cgroup, logFile));
  try {
    await supervisor.start();
  } catch (err) {
    // The supervisor names the log; SPIRE's own words say why (a bad key, a refused token).
    if (err instanceof Error && !err.message.includes('Last lines of')) err.message += quoteLog(logFile);
    throw err;
  }
}

function spireSamplers(agent: SpireAgent, ctx: TargetContext, p: SpireParts): Sampler[] {
  const sup = p.supervisor!;
  const port = p.profilingPort;
  const profiled = { port: () => (sup.pid() === null ? null : port), dir: ctx.dir };
  // Goroutines are counted as often as the heap is read unless asked otherwise.
  const goroutineMs = agent.goroutineProfiles ?? agent.heapProfiles;
  return [
    memorySampler(p.cgroup, () => sup.pid(), agent.memoryLimit),
    createSampler('spire-metrics', { metricsUrl: () => sup.metricsUrl() }),
    ...(agent.heapProfiles !== undefined && port !== null ? [spireHeapProfileSampler({ ...profiled, intervalMs: agent.heapProfiles })] : []),
    ...(goroutineMs !== undefined && port !== null ? [spireGoroutineProfileSampler({ ...profiled, intervalMs: goroutineMs })] : []),
  ];
}

async function stopSpire(ctx: TargetContext, p: SpireParts): Promise<void> {
  if (p.registrar) {
    ctx.sandbox.off('pod-start', p.registrar.add);
    ctx.sandbox.off('pod-end', p.registrar.end);
  }
  try {
    await p.supervisor?.stop();
  } finally {
    await p.registrar?.close();
    await p.server?.close();
  }
}
