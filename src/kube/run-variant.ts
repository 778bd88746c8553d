// One repetition of one variant in a cluster: preflight, apply the agent side, watch it become
// ready, apply the generator pods, release them together, pull their seconds through the pod
// proxy while the agent's cgroup is sampled every 100 ms, save the logs, tear the namespace down.
// Returns the same RepMeasurement the local runner produces and writes the same run folder.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import { RunError } from '../errors.js';
import { NdjsonWriter, SamplerLoop, type Sampler } from '../sample/index.js';
import { completeRejections, deathRecord, oomKillsOf, Timeline, type EventSample, type FaultRecord, type RepMeasurement, type SampleLine, type Scenario } from '../scenario/index.js';
import { FaultScheduler, type FaultEvent } from '../fault/index.js';
import type { LoadSampleWithBystanders } from '../load/index.js';
import { sleep } from '../util/index.js';
import { clusterFaultActions, clusterVersionProblems } from './fault-cluster.js';
import type { RenderContext } from './objects.js';
import { loadPod, renderGenerators } from './render-generators.js';
import { AGENT_NAME as AGENT_CONTAINER } from './render-agent-reference.js';
import { saveLogs } from './agent-logs.js';
import { AgentTracker, type Death } from './agent-tracker.js';
import { applyObjects } from './apply.js';
import { LoadPods } from './load-pods.js';
import { KindAgentCgroup, type NodeCgroupRoot } from './kind-cgroup.js';
import { ROLE_LABEL } from './names.js';
import { preflight, type PreflightResult } from './preflight.js';
import { renderAgentSide } from './render.js';
import { renderChecked, renderContext } from './render-scenario.js';
import { kindMemorySampler } from './sampler-kind-memory.js';
import { podMetricsSampler } from './sampler-pod-metrics.js';
import { PodMemorySampler } from './sampler-pod-memory.js';
import { teardownVariant } from './teardown.js';
import { DEFAULT_IMAGES, SOCKET_DIR, SOCKET_FILE, type KindImages, type KindVariant } from './variant.js';
import { createGeneratorEntry } from './spire-entries.js';
import { placeFillerPods } from './filler-pods.js';
import { waitFor } from './wait.js';
import { watchPods } from './watch-pods.js';

export interface RunVariantInClusterOptions {
  /** From loadKubeConfig(parseClusterTarget({ cluster, context })). */
  kc: KubeConfig;
  /** The kind cluster name, or the name spire-server's k8s_psat should use for another cluster. */
  clusterName: string;
  scenario: Scenario;
  variant: KindVariant;
  runId: string;
  rep: number;
  /** The run folder; this writes <dirName>/samples.ndjson and the logs there. */
  runDir: string;
  /** Folder name of this repetition (the local runner's `<variant>.r<rep>`). */
  dirName: string;
  images?: Partial<KindImages>;
  /** Images made on this machine and imported into the node (never pulled): missing ones fail the preflight. */
  localImages?: string[];
  /** The API server on the node's loopback (OpenCluster.hostApiServer). */
  hostApiServer?: { host: string; port: number } | null;
  /** The node container's cgroup on this host (kind); null: no 100 ms memory series (other clusters). */
  nodeCgroup: NodeCgroupRoot | null;
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
  const s = o.scenario;
  const images = { ...DEFAULT_IMAGES, ...o.images };
  // Without the node's cgroup on this host (not kind), a sampler pod on the agent's node reads it.
  const ctx = renderContext(s, o.variant, { runId: o.runId, rep: o.rep, images, clusterName: o.clusterName, memorySampler: o.nodeCgroup === null, ...(o.hostApiServer ? { hostApiServer: o.hostApiServer } : {}) });
  const all = renderChecked(ctx);
  const dir = join(o.runDir, o.dirName);
  mkdirSync(dir, { recursive: true });
  const writer = new NdjsonWriter(join(dir, 'samples.ndjson'));

  const emit = (line: SampleLine) => {
    writer.write(line);
    o.onSample?.(line);
  };
  // Phases on the timeline, as the local runner marks them; every death carries the phase it fell in.
  const timeline = new Timeline(emit);
  const event = (type: EventSample['type'], detail?: string) => timeline.event(type, detail);
  const t = () => timeline.t();

  const m: RepMeasurement = {
    runDir: o.dirName,
    memoryLimitBytes: o.variant.memoryLimitBytes,
    peakMemoryBytes: null,
    oomKills: 0,
    restarts: 0,
    downtimeSeconds: 0,
    loadSeconds: 0,
    counts: { ok: 0, rateLimited: 0, deadlineExceeded: 0, error: 0 },
    histograms: {},
    peakInflightAttestations: null,
    rejectionsByKeyType: {},
    workerMemoryBytes: null,
    deaths: [],
  };

  const facts = await preflight(o.kc, all, { localImages: [images.project, ...(o.localImages ?? [])] });
  o.onPreflight?.(facts);
  // Before anything is applied: a fault this cluster's version cannot carry out.
  const tooOld = clusterVersionProblems(s.faults, facts.serverVersion);
  if (tooOld.length) throw new RunError(`preflight (faults): ${tooOld.join('; ')}`);

  let cg: KindAgentCgroup | null = null;
  let agentPod: V1Pod | null = null;
  let stuck: string | null = null;
  let watchError: Error | null = null;
  const tracker = new AgentTracker({
    container: 'agent',
    event,
    oomKillRose: () => cg?.oomKillRose() ?? null,
    onContainerChange: (id) => {
      if (cg) cg.setContainer(id);
      if (podMemory && tracker.podUid) void podMemory.follow(tracker.podUid, id);
      event('agent-start', id);
    },
    onStuck: (reason) => (stuck = reason),
  });
  const failure = () =>
    stuck ? new RunError(`agent pod in ${ctx.namespace} cannot start: ${stuck}`) : watchError ? new RunError(watchError.message, { cause: watchError }) : null;
  const memory = kindMemorySampler(() => cg, o.variant.memoryLimitBytes);
  const podMemory = ctx.memorySampler ? new PodMemorySampler(o.kc, ctx.namespace, o.variant.memoryLimitBytes) : null;
  let loop: SamplerLoop | null = null;
  let faults: FaultScheduler | null = null;
  const metrics = podMetricsSampler(o.kc, ctx.namespace, () => (agentPod as V1Pod | null)?.metadata?.name ?? null);
  const watch = watchPods(
    o.kc,
    ctx.namespace,
    `${ROLE_LABEL}=agent`,
    (type, pod) => {
      // A pod deleted on purpose (agent-kill) says nothing more; its replacement is the agent now.
      if (type === 'DELETED' || tracker.isGone(pod.metadata?.uid)) return;
      agentPod = pod;
      const uid = pod.metadata?.uid;
      if (o.nodeCgroup && uid && cg?.podUid !== uid) cg = new KindAgentCgroup(o.nodeCgroup, uid);
      tracker.observe(pod);
    },
    (err) => (watchError = err),
  );
  const onAbort = () => event('interrupted');
  o.signal.addEventListener('abort', onAbort, { once: true });

  try {
    timeline.enter('starting-pods');
    await applyObjects(o.kc, renderAgentSide(ctx));
    event('note', `agent applied in ${ctx.namespace}`);
    const agentReady = await waitFor(`the agent pod in ${ctx.namespace} did not become ready`, () => tracker.ready, {
      timeoutMs: o.timeouts?.agentReadyMs ?? 120_000,
      signal: o.signal,
      failure,
    });
    if (!agentReady) return m;
    const agentNode = (agentPod as V1Pod | null)?.spec?.nodeName;
    if (agentNode) {
      const filler = await placeFillerPods(o.kc, ctx, agentNode, o.signal);
      if (filler.count) event('note', `${filler.count} filler pods listed by the kubelet on ${agentNode} (${Math.round(filler.specBytes / 1024)} KiB of pod specs)`);
    }
    for (const k of o.variant.kubeletNotApplied) event('note', `agent.kubelet.${k} is a setting of the local kubelet emulator: not applied (the cluster's kubelet is the real one)`);
    // The sampler pod is told which container to follow; until it answers, the target is sent again at each pull.
    if (podMemory && tracker.podUid && tracker.containerID) await podMemory.follow(tracker.podUid, tracker.containerID);
    // SPIRE: the generators need an entry; their pods report ready only once an SVID was fetched.
    if (o.variant.kind === 'spire') await createGeneratorEntry(o.kc, ctx, facts.nodes[0]!.uid);

    const pods = new LoadPods(o.kc, ctx.namespace, ctx.load);
    try {
      await applyObjects(o.kc, renderGenerators(ctx));
      const ready = await waitFor(`the load pods in ${ctx.namespace} did not fork their workers`, () => pods.allReady(), {
        timeoutMs: o.timeouts?.generatorsReadyMs ?? 180_000,
        pollMs: 1000,
        signal: o.signal,
        failure,
      });
      if (!ready) return m;

      // t counts toward the planned load start (negative during warm-up), as in the local runner.
      timeline.fix(Date.now() + s.warmup);
      const samplers: Sampler[] = o.nodeCgroup ? [memory] : [];
      if (o.variant.kind === 'reference') samplers.push(metrics);
      loop = new SamplerLoop(samplers, writer, t);
      if (o.onSample) loop.onSample(o.onSample);
      loop.start();
      const l = loop;
      podMemory?.start((line) => l.emit(line), (at) => timeline.t(at));
      timeline.enter('warmup');
      event('warmup-start');
      await sleep(s.warmup, o.signal);
      if (o.signal.aborted) return m;

      const t0 = Date.now() + 200;
      const endAt = t0 + s.duration;
      timeline.fix(t0);
      await pods.release(t0, endAt);
      timeline.enter('load');
      event('load-start');
      if (s.faults.length) faults = startFaults(s, t0, o, ctx, pods, tracker, () => agentPod, (e) => timeline.event(e.type, e.detail));
      const hardEnd = endAt + Math.max(s.load.deadline, s.load.bystanders?.deadline ?? 0) + END_GRACE_MS;
      while (Date.now() < hardEnd && !o.signal.aborted) {
        await sleep(1000, o.signal);
        await pods.pull();
        for (const line of pods.emitComplete()) {
          loop.emit(line);
          feedBystanders(faults, line);
        }
        if (Date.now() >= endAt) {
          if (timeline.phase === 'load') timeline.enter('drain');
          await pods.collectFinals();
          if (pods.allFinished()) break;
        }
        const f = failure();
        if (f && !stuck) throw f;
      }
      m.loadSeconds = Math.max(0, Math.min(Date.now(), endAt) - t0) / 1000;
      if (faults) m.faults = recordsOf(await faults.stop(), o.rep);
      await pods.end();
      event('load-end');
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
      if (r.clientFallback) event('note', `generator pods: ${r.clientFallback}`);
    } finally {
      pods.destroy();
    }
    return m;
  } finally {
    o.signal.removeEventListener('abort', onAbort);
    // A squeeze still in force is undone before the namespace goes (and with it the pod).
    if (faults && !m.faults) m.faults = recordsOf(await faults.stop().catch(() => []), o.rep);
    await podMemory?.stop();
    loop?.stop();
    watch.stop();
    // One peak from the one source this cluster has; null when nothing could be read (never 0).
    m.peakMemoryBytes = o.nodeCgroup ? memory.peakBytes() : podMemory?.peakBytes() ?? null;
    const cgroupVersion = o.nodeCgroup?.version ?? podMemory?.flavour ?? null;
    if (cgroupVersion) o.onCgroupVersion?.(cgroupVersion);
    m.peakSource = m.peakMemoryBytes === null ? 'unmeasured' : 'kernel';
    // Not fatal (the load ran), but said: the peak is unmeasured (null), never 0.
    if (podMemory && m.peakMemoryBytes === null) event('note', `no reading came from the memory-sampler pod in ${ctx.namespace}: the agent's peak memory is unmeasured in this run`);
    m.restarts = tracker.restarts;
    m.peakInflightAttestations = metrics.peakInflight();
    m.rejectionsByKeyType = completeRejections(metrics.rejections(), m.counts.rateLimited + (m.bystanders?.totals.rateLimited ?? 0));
    m.downtimeSeconds = Math.round(tracker.downtimeSeconds() * 10) / 10;
    const deaths: Death[] = tracker.deaths;
    m.deaths = deaths.map((d) => deathRecord({ rep: o.rep, atMs: timeline.t(d.seenAt), phase: timeline.phaseAt(d.seenAt), cause: d.cause, detail: d.detail }, s.oomKillsOutsideLoad));
    m.oomKills = oomKillsOf(m.deaths);
    const podName = (agentPod as V1Pod | null)?.metadata?.name;
    if (podName) await saveLogs(o.kc, ctx.namespace, podName, 'agent', dir, { previous: deaths.length > 0 }).catch(() => undefined);
    writer.close();
    await teardownVariant(o.kc, ctx.namespace, { image: images.project, runId: o.runId }).catch((err) => process.stderr.write(`attestorm: teardown of ${ctx.namespace} failed (${(err as Error).message}); run \`attestorm kind cleanup\`\n`));
  }
}

/** The scenario's fault schedule in the cluster, from the moment the calls start (the release). */
function startFaults(
  s: Scenario,
  t0: number,
  o: RunVariantInClusterOptions,
  ctx: RenderContext,
  pods: LoadPods,
  tracker: AgentTracker,
  agentPod: () => V1Pod | null,
  onEvent: (e: FaultEvent) => void,
): FaultScheduler {
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
  const scheduler = new FaultScheduler({
    faults: s.faults,
    loadStart: t0,
    signal: o.signal,
    target: {
      socket: `${SOCKET_DIR}/${SOCKET_FILE}`,
      agentPid: () => null,
      agentCgroup: null,
      kubelet: null,
      // Recovery: a real call to the agent, made from inside a load pod through the pod proxy.
      waitAgentAnswers: (signal) => pods.waitAgentAnswers(signal),
      actions,
    },
    onEvent,
  });
  scheduler.start();
  return scheduler;
}

/** Fault recovery reads the bystanders' seconds (t: the second's end, ms since the calls started). */
function feedBystanders(faults: FaultScheduler | null, line: LoadSampleWithBystanders): void {
  const b = line.bystanders;
  if (faults && b) faults.bystanderSecond({ t: line.t + 1000, calls: b.ok + b.rateLimited + b.deadlineExceeded + b.error, ok: b.ok });
}

function recordsOf(records: ReadonlyArray<Omit<FaultRecord, 'rep'>>, rep: number): FaultRecord[] {
  return records.map((r) => ({ rep, ...r }));
}
