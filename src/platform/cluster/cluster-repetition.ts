// One repetition of one variant in a cluster: preflight, apply the agent side, watch it become
// ready, apply the generator pods, release them together, pull their seconds through the pod
// proxy while the agent's cgroup is sampled every 100 ms, save the logs, tear the namespace down.
// Returns the same RepMeasurement the local platform produces and writes the same run folder.
import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import { NO_PEAKS } from '../../contract/index.js';
import { RunError } from '../../errors.js';
import { KindAgentCgroup, type KindMemorySampler, type NodeCgroupRoot } from '../../kind/index.js';
import {
  AGENT_NAME as AGENT_CONTAINER,
  clusterAgent,
  DEFAULT_IMAGES,
  loadPod,
  renderAgentSide,
  renderChecked,
  renderContext,
  renderGenerators,
  ROLE_LABEL,
  SOCKET_DIR,
  SOCKET_FILE,
  type ClusterImages,
  type ClusterVariant,
  type NodeRoles,
  type RenderContext,
} from '../../kube/index.js';
import type { FaultTarget } from '../../fault/index.js';
import { createSampler, type Sampler } from '../../sample/index.js';
import { loadClientRecord, type EventSample, type RepMeasurement, type SampleLine, type Scenario } from '../../scenario/index.js';
import { sleep, withinMs } from '../../util/index.js';
import {
  closeMeasurement,
  endFaults,
  feedBystanders,
  noteDeath,
  noteDowntime,
  openRepetitionRecord,
  runRepetitionSteps,
  startFaults,
  startSamplerLoop,
  undoFaults,
  type RepetitionRecord,
  type RepetitionSteps,
} from '../repetition.js';
import { saveLogs } from './agent-logs.js';
import { AgentNodeWatch, type NodeContainerProbe } from './agent-node.js';
import { AgentTracker } from './agent-tracker.js';
import { ClusterNeighbours } from './cluster-neighbours.js';
import { applyObjects } from './apply.js';
import { clusterFaultActions, clusterVersionProblems } from './fault-cluster.js';
import { placeFillerPods } from './filler-pods.js';
import { LoadPods } from './load-pods.js';
import { preflight, type PreflightResult } from './preflight.js';
import './sampler-pod-metrics.js';
import { PodMemorySampler } from './sampler-pod-memory.js';
import { teardownVariant } from './teardown.js';
import { waitFor } from './wait.js';
import { watchPods } from './watch-pods.js';

export interface RunVariantInClusterOptions {
  /** From loadKubeConfig(parseClusterTarget({ cluster, context })). */
  kc: KubeConfig;
  /** The kind cluster name, or the name spire-server's k8s_psat should use for another cluster. */
  clusterName: string;
  scenario: Scenario;
  variant: ClusterVariant;
  runId: string;
  rep: number;
  /** The run folder; this writes <dirName>/samples.ndjson and the logs there. */
  runDir: string;
  /** Folder name of this repetition (the local platform's `<variant>.r<rep>`). */
  dirName: string;
  images?: Partial<ClusterImages>;
  /** Images made on this machine and imported into the node (never pulled): missing ones fail the preflight. */
  localImages?: string[];
  /** The API server on the node's loopback (OpenCluster.hostApiServer). */
  hostApiServer?: { host: string; port: number } | null;
  /** The node container's cgroup on this host (kind; the storm node's in a three-node run); null: no 100 ms memory series (other clusters). */
  nodeCgroup: NodeCgroupRoot | null;
  /** scenario.cluster.topology three-node: which node holds what (scenarioNodeRoles). */
  nodes?: NodeRoles | null;
  /** A single-node scenario in a cluster of several nodes: the node every pod of the run is put on (scenarioSingleNode). */
  nodeName?: string | null;
  /** kind: the state of the agent node's container in its engine; null on other clusters (the Node object is watched there). */
  nodeContainer?: NodeContainerProbe | null;
  signal: AbortSignal;
  onSample?(line: SampleLine): void;
  /** Cluster and node facts for results.json (platform kind). */
  onPreflight?(facts: PreflightResult): void;
  /** The agent node's cgroup version, once known (the node's cgroup on this host, or the memory-sampler pod's answer). */
  onCgroupVersion?(version: 'v1' | 'v2'): void;
  timeouts?: { agentReadyMs?: number; generatorsReadyMs?: number };
}

const END_GRACE_MS = 3000;

export async function runVariantInCluster(o: RunVariantInClusterOptions): Promise<RepMeasurement> {
  const images = { ...DEFAULT_IMAGES, ...o.images };
  // Without the node's cgroup on this host (not kind), a sampler pod on the agent's node reads it.
  const ctx = renderContext(o.scenario, o.variant, {
    runId: o.runId,
    rep: o.rep,
    images,
    clusterName: o.clusterName,
    memorySampler: o.nodeCgroup === null,
    ...(o.hostApiServer ? { hostApiServer: o.hostApiServer } : {}),
    ...(o.nodes ? { nodes: o.nodes } : {}),
    ...(o.nodeName ? { nodeName: o.nodeName } : {}),
  });
  const all = renderChecked(ctx);
  const record = openRepetitionRecord(o.runDir, o.dirName, o.rep, o.variant.memoryLimitBytes, o.onSample);
  const facts = await preflight(o.kc, all, { localImages: [images.project, ...(o.localImages ?? [])] });
  o.onPreflight?.(facts);
  // Before anything is applied: a fault this cluster's version cannot carry out.
  const tooOld = clusterVersionProblems(o.scenario.faults, facts.serverVersion);
  if (tooOld.length) throw new RunError(`preflight (faults): ${tooOld.join('; ')}`);

  // A failure ends the run: a cluster that cannot run one variant's pods cannot run the others'.
  return runRepetitionSteps(record, o.scenario.warmup, o.signal, 'throw', new ClusterRepetition(o, ctx, record, images.project, facts));
}

/**
 * One repetition in the cluster while it runs: the agent pod as the watch sees it, its memory and
 * metrics samplers, the fault schedule, and the measurement they fill. Phases on the timeline, as
 * the local platform marks them; every death carries the phase it fell in.
 */
class ClusterRepetition implements RepetitionSteps {
  private readonly tracker: AgentTracker;
  private readonly memory: KindMemorySampler;
  private readonly podMemory: PodMemorySampler | null;
  private readonly metrics: Sampler;
  private readonly watch: { stop(): void };
  /** Three-node runs: the quiet node's agent and the server beside the agent under test. */
  private readonly neighbours: ClusterNeighbours | null;
  private readonly node: AgentNodeWatch;
  private cg: KindAgentCgroup | null = null;
  private agentPod: V1Pod | null = null;
  private stuck: string | null = null;
  private watchError: Error | null = null;
  private pods: LoadPods | null = null;
  private readonly onAbort = () => this.event('interrupted');

  constructor(
    private readonly o: RunVariantInClusterOptions,
    private readonly ctx: RenderContext,
    private readonly record: RepetitionRecord,
    private readonly projectImage: string,
    private readonly facts: PreflightResult,
  ) {
    this.tracker = new AgentTracker({
      container: 'agent',
      event: (type, detail) => this.event(type, detail),
      oomKillRose: () => this.cg?.oomKillRose() ?? null,
      onContainerChange: (id) => {
        if (this.cg) this.cg.setContainer(id);
        if (this.podMemory && this.tracker.podUid) void this.podMemory.follow(this.tracker.podUid, id);
        this.event('agent-start', id);
      },
      onStuck: (reason) => (this.stuck = reason),
    });
    this.memory = createSampler('kind-cgroup-memory', { cgroup: () => this.cg, limitBytes: o.variant.memoryLimitBytes });
    this.podMemory = ctx.memorySampler ? new PodMemorySampler(o.kc, ctx.namespace, o.variant.memoryLimitBytes) : null;
    this.neighbours = ctx.nodes
      ? new ClusterNeighbours({
          kc: o.kc,
          namespace: ctx.namespace,
          nodes: ctx.nodes,
          server: clusterAgent(o.variant.kind).server,
          nodeNames: new Map(facts.nodes.map((n) => [n.uid, n.name])),
          event: (type, detail) => this.event(type, detail),
        })
      : null;
    this.node = new AgentNodeWatch(o.kc, { container: o.nodeContainer ?? null });
    this.node.start();
    this.metrics = createSampler('pod-proxy-metrics', { kc: o.kc, namespace: ctx.namespace, pod: () => this.agentPod?.metadata?.name ?? null });
    this.watch = watchPods(
      o.kc,
      ctx.namespace,
      `${ROLE_LABEL}=agent`,
      (type, pod) => {
        // A pod deleted on purpose (agent-kill) says nothing more; its replacement is the agent now.
        if (type === 'DELETED' || this.tracker.isGone(pod.metadata?.uid)) return;
        // Two agents in a three-node run: the quiet node's is followed on its own, one not yet bound waits.
        if (this.neighbours?.observeAgent(pod) || (ctx.nodes && pod.spec?.nodeName !== ctx.nodes.storm)) return;
        this.agentPod = pod;
        if (pod.spec?.nodeName) this.node.follow(pod.spec.nodeName);
        const uid = pod.metadata?.uid;
        if (o.nodeCgroup && uid && this.cg?.podUid !== uid) this.cg = new KindAgentCgroup(o.nodeCgroup, uid);
        this.tracker.observe(pod);
      },
      (err) => (this.watchError = err),
    );
    o.signal.addEventListener('abort', this.onAbort, { once: true });
  }

  private event(type: EventSample['type'], detail?: string): void {
    this.record.timeline.event(type, detail);
  }

  private failure(): RunError | null {
    if (this.node.lost) return new RunError(this.node.lost);
    if (this.stuck) return new RunError(`agent pod in ${this.ctx.namespace} cannot start: ${this.stuck}`);
    return this.watchError ? new RunError(this.watchError.message, { cause: this.watchError }) : null;
  }

  /** The agent side, then the load pods, each applied and waited for; false when interrupted first. */
  async start(): Promise<boolean> {
    return (await this.startAgent()) && (await this.startLoadPods());
  }

  /** Applies the agent side and waits for it; false when interrupted first. */
  private async startAgent(): Promise<boolean> {
    const { o, ctx } = this;
    this.record.timeline.enter('starting-pods');
    await applyObjects(o.kc, renderAgentSide(ctx));
    this.event('note', `agent applied in ${ctx.namespace}`);
    const agents = ctx.nodes ? `the agent pods on ${ctx.nodes.storm} and ${ctx.nodes.quiet}` : 'the agent pod';
    const ready = await waitFor(`${agents} in ${ctx.namespace} did not become ready`, () => this.tracker.ready && (this.neighbours?.quiet.ready ?? true), {
      timeoutMs: o.timeouts?.agentReadyMs ?? 120_000,
      signal: o.signal,
      failure: () => this.failure(),
    });
    if (!ready) return false;
    const agentNode = this.agentPod?.spec?.nodeName;
    if (agentNode) {
      const filler = await placeFillerPods(o.kc, ctx, agentNode, o.signal);
      if (filler.count)
        this.event('note', `${filler.count} filler pods listed by the kubelet on ${agentNode} (${Math.round(filler.specBytes / 1024)} KiB of pod specs)`);
    }
    for (const k of o.variant.kubeletNotApplied)
      this.event('note', `agent.kubelet.${k} is a setting of the local kubelet emulator: not applied (the cluster's kubelet is the real one)`);
    // The sampler pod is told which container to follow; until it answers, the target is sent again at each pull.
    if (this.podMemory && this.tracker.podUid && this.tracker.containerID) await this.podMemory.follow(this.tracker.podUid, this.tracker.containerID);
    // What the agent must know of the load pods, from each node's agent: the storm's, and the quiet node's for the bystanders.
    const agentNodes = ctx.nodes ? [ctx.nodes.storm, ctx.nodes.quiet] : [agentNode ?? this.facts.nodes[0]!.name];
    for (const name of agentNodes) {
      const uid = this.facts.nodes.find((n) => n.name === name)?.uid ?? this.facts.nodes[0]!.uid;
      await clusterAgent(o.variant.kind).beforeLoad?.(o.kc, ctx, uid);
    }
    return true;
  }

  /** The generator and bystander pods, applied; true once every one has forked its workers, false when interrupted first. */
  private async startLoadPods(): Promise<boolean> {
    const { o, ctx } = this;
    const pods = (this.pods = new LoadPods(o.kc, ctx.namespace, ctx.load));
    await applyObjects(o.kc, renderGenerators(ctx));
    return waitFor(`the load pods in ${ctx.namespace} did not fork their workers`, () => pods.allReady(), {
      timeoutMs: o.timeouts?.generatorsReadyMs ?? 180_000,
      pollMs: 1000,
      signal: o.signal,
      failure: () => this.failure(),
    });
  }

  /** The load pods released together after the warm-up, pulled until they finish; their figures into the measurement. */
  async storm(): Promise<void> {
    const { o, ctx } = this;
    const { timeline, m } = this.record;
    const s = o.scenario;
    const pods = this.pods!;
    const loop = this.record.loop!;
    const t0 = Date.now() + 200;
    const endAt = t0 + s.duration;
    timeline.fix(t0);
    this.neighbours?.markLoad(t0, endAt);
    await pods.release(t0, endAt);
    timeline.enter('load');
    this.event('load-start');
    if (s.faults.length)
      startFaults(
        this.record,
        s.faults,
        t0,
        o.signal,
        faultTarget(o, ctx, pods, this.tracker, () => this.agentPod),
      );
    await this.pullUntilFinished(pods, loop, endAt + Math.max(s.load.deadline, s.load.bystanders?.deadline ?? 0) + END_GRACE_MS, endAt);
    m.loadSeconds = Math.max(0, Math.min(Date.now(), endAt) - t0) / 1000;
    await endFaults(this.record);
    await pods.end();
    this.event('load-end');
    timeline.enter('stop');
    if (o.signal.aborted) await pods.stop();
    await pods.pull();
    // The workers' gaps come with each pod's final dump (after a stop too).
    if (!pods.allFinished()) await pods.collectFinals();
    for (const line of pods.emitAll()) loop.emit(line);
    const r = pods.result(m.loadSeconds * 1000);
    m.counts = r.counts;
    m.histograms = r.histograms;
    if (r.bystanders) m.bystanders = r.bystanders;
    if (r.client) m.loadClient = loadClientRecord(s.load.client, r.client.ran, r.client.fallback);
    if (r.client?.fallback) this.event('note', `generator pods: ${r.client.fallback}`);
  }

  /** The agent's memory (where this host reads its node's cgroup) and metrics samplers, and the sampler pod's pulls, from the warm-up on. */
  startSamplers(): void {
    const { o } = this;
    const samplers: Sampler[] = o.nodeCgroup ? [this.memory] : [];
    if (clusterAgent(o.variant.kind).servesMetrics) samplers.push(this.metrics);
    const loop = startSamplerLoop(this.record, samplers);
    this.neighbours?.start();
    this.podMemory?.start(
      (line) => loop.emit(line),
      (at) => this.record.timeline.t(at),
    );
  }

  /** Each second: the pods' completed seconds into the samples (and the bystanders' into fault recovery), until all finished after endAt. */
  private async pullUntilFinished(pods: LoadPods, loop: NonNullable<RepetitionRecord['loop']>, hardEnd: number, endAt: number): Promise<void> {
    const { o } = this;
    const { timeline } = this.record;
    while (Date.now() < hardEnd && !o.signal.aborted) {
      await sleep(1000, o.signal);
      await pods.pull();
      for (const line of pods.emitComplete()) {
        loop.emit(line);
        feedBystanders(this.record, line.bystanders, line.t + 1000);
      }
      if (Date.now() >= endAt) {
        if (timeline.phase === 'load') timeline.enter('drain');
        await pods.collectFinals();
        if (pods.allFinished()) break;
      }
      const f = this.failure();
      if (f && !this.stuck) throw f;
    }
  }

  /** Whatever happened: faults undone, samplers stopped, the measurement completed, logs saved, the namespace torn down. */
  async finish(): Promise<void> {
    const { o, ctx, tracker } = this;
    const { m, dir, writer } = this.record;
    o.signal.removeEventListener('abort', this.onAbort);
    this.pods?.destroy();
    // A squeeze still in force is undone before the namespace goes (and with it the pod).
    await undoFaults(this.record);
    await this.podMemory?.stop();
    // The loop's stop takes each sampler's last reading: the peak below must include it.
    await this.record.loop?.stop();
    this.watch.stop();
    // The peaks from the one source this cluster has; null when nothing could be read (never 0).
    const peaks = o.nodeCgroup ? this.memory.peaks() : (this.podMemory?.peaks() ?? null);
    m.peaks = peaks ?? { ...NO_PEAKS };
    const cgroupVersion = o.nodeCgroup?.version ?? this.podMemory?.flavour ?? null;
    if (cgroupVersion) o.onCgroupVersion?.(cgroupVersion);
    m.peakSource = peaks === null ? 'unmeasured' : 'kernel';
    // Not fatal (the load ran), but said: the peak is unmeasured (null), never 0.
    if (this.podMemory && peaks === null)
      this.event('note', `no reading came from the memory-sampler pod in ${ctx.namespace}: the agent's peak memory is unmeasured in this run`);
    m.restarts = tracker.restarts;
    noteDowntime(m, tracker.downtimeSeconds() * 1000);
    for (const d of tracker.deaths) noteDeath(this.record, o.scenario.oomKillsOutsideLoad, { cause: d.cause, detail: d.detail, at: d.seenAt });
    closeMeasurement(this.record);
    // The neighbours' figures must not keep the namespace from being torn down: a failure is said, not thrown.
    if (this.neighbours)
      await this.closeNeighbours(this.neighbours).catch((err) => this.event('note', `the quiet node and the server were not read: ${(err as Error).message}`));
    const podName = this.agentPod?.metadata?.name;
    this.node.stop();
    // Bounded: the logs of an agent whose node went away are asked of a kubelet that is not there.
    if (podName)
      await withinMs(saveLogs(o.kc, ctx.namespace, podName, 'agent', dir, { previous: tracker.deaths.length > 0 }), 15_000, 'agent logs').catch(
        () => undefined,
      );
    writer.close();
    const lostNodes = this.node.goneNode ? [this.node.goneNode] : [];
    // A run that lost its node ends promptly: what a short wait leaves, `kind cleanup` removes.
    const namespaceGoneMs = this.node.lost ? 30_000 : undefined;
    await teardownVariant(o.kc, ctx.namespace, { image: this.projectImage, runId: o.runId, lostNodes, ...(namespaceGoneMs ? { namespaceGoneMs } : {}) }).catch(
      (err) => process.stderr.write(`attestorm: teardown of ${ctx.namespace} failed (${(err as Error).message}); run \`attestorm kind cleanup\`\n`),
    );
  }

  /** The quiet node's and the server's figures beside the storm node's (the measurement's own) into the measurement; the quiet agent's log. */
  private async closeNeighbours(neighbours: ClusterNeighbours): Promise<void> {
    const { o, ctx } = this;
    const { m, dir } = this.record;
    const storm = { peakUsageBytes: m.peaks.usageBytes, peakWorkingSetBytes: m.peaks.workingSetBytes, oomKills: m.oomKills, restarts: m.restarts };
    const b = m.bystanders?.totals;
    m.cluster = await neighbours.finish(o.rep, storm, b ? { calls: b.calls, ok: b.ok } : null);
    const quietPod = neighbours.quietPod;
    if (quietPod)
      await withinMs(
        saveLogs(o.kc, ctx.namespace, quietPod, 'agent', dir, { previous: neighbours.quiet.deaths.length > 0, prefix: 'agent-quiet' }),
        15_000,
        'quiet agent logs',
      ).catch(() => undefined);
  }
}

/** What the fault schedule acts on in the cluster: the agent pod through the API server, the storm's pods. */
function faultTarget(o: RunVariantInClusterOptions, ctx: RenderContext, pods: LoadPods, tracker: AgentTracker, agentPod: () => V1Pod | null): FaultTarget {
  const actions = clusterFaultActions({
    kc: o.kc,
    namespace: ctx.namespace,
    container: AGENT_CONTAINER,
    agentPod,
    agentDeleted: (uid, detail) => tracker.podDeleted(uid, detail),
    agentReplaced: async (uid, timeoutMs) => {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline && !o.signal.aborted) {
        if (tracker.podUid !== null && tracker.podUid !== uid) return true;
        await sleep(100, o.signal);
      }
      return false;
    },
    churnPods: (count) => pods.replaceStormPods(count, (name) => loadPod(ctx, 'generator', name)),
  });
  return {
    socket: `${SOCKET_DIR}/${SOCKET_FILE}`,
    agentPid: () => null,
    agentCgroup: null,
    kubelet: null,
    // Recovery: a real call to the agent, made from inside a load pod through the pod proxy.
    waitAgentAnswers: (signal) => pods.waitAgentAnswers(signal),
    actions,
  };
}
