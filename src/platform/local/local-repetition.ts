// One repetition of one variant on this machine: sandbox and kubelet emulator, the agent under test
// (a target), samplers, warm-up, the load, and the teardown — every piece owned and reaped here. Each
// phase is marked on the timeline, and every agent death carries the phase it happened in.
import { cpus } from 'node:os';
import type { CgroupHost } from '../../cgroup/index.js';
import { parseCpuList } from '../../cgroup/index.js';
import { NO_PEAKS, type MetricsSample } from '../../contract/index.js';
import { waitAgentAnswers, type FaultTarget } from '../../fault/index.js';
import { bystanderSandboxOptions, type StormControl, type StormWave, type StormWaveEnd } from '../../load/index.js';
import { busyCores, CumulativeCpuSeries, loadAverage1m, readMachineCpu, type MachineCpuReading } from '../../sample/index.js';
import { createSandbox, ensureRunFolder, newRunId, otherPodIds, runTempDir, type Sandbox } from '../../sandbox/index.js';
import { loadClientRecord, variantDirName, type RepMeasurement, type Scenario } from '../../scenario/index.js';
import { podListEmulatorOptions, targetKind, type AgentTarget, type DeathVerdict, type TargetMaker } from '../../targets/index.js';
import type { RepetitionContext } from '../platform.js';
import { recordKubeletFetches, type KubeletFetchRecorder } from './kubelet-fetch-recorder.js';
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
} from '../repetition.js';

/** The local platform's context: the runner's, and this machine's cgroups and the run's targets. */
export interface LocalRepetitionContext extends RepetitionContext {
  host: CgroupHost | null;
  /** Makes the variant's target, with what its kind prepared for the run. */
  targets: TargetMaker;
  /** Scenario isolation in force: the agent's cgroup is pinned to these CPUs (the runner already is off them). */
  agentCpus?: string;
}

/** What one repetition holds while it runs; everything here is reaped by finishRepetition. */
interface Repetition extends RepetitionRecord {
  ctx: LocalRepetitionContext;
  tmpDir: string;
  sandbox: Sandbox | null;
  target: AgentTarget | null;
  /** The agent's CPU seconds counted during the load phase, and its last cumulative reading. */
  agentCpu: { last: number | null; inLoad: number; series: CumulativeCpuSeries };
  /** /proc/stat when the calls started, for the machine's busy cores over the load. */
  machineAtCalls: MachineCpuReading | null;
  /** The kubelet emulator's request count when the calls started. */
  kubeletAtCalls: number | null;
  /** Every /pods request into the samples (absent for agents that ask no emulator). */
  fetches: KubeletFetchRecorder | null;
  /** When the calls ran (Date.now() values), for the fetch figures. */
  callsWindow: { from: number; to: number; seconds: number } | null;
}

/** Open connections and (SPIRE's) goroutines at their highest among the load phase's scrapes. */
function notePeaks(m: RepMeasurement, line: MetricsSample & { spire?: { runtime?: { goroutines?: number | null } | null } }): void {
  const goroutines = line.spire?.runtime?.goroutines ?? null;
  const up = (a: number | null | undefined, b: number | null) => (b === null ? (a ?? null) : Math.max(a ?? 0, b));
  m.agentPeaks = { openConnections: up(m.agentPeaks?.openConnections, line.openConnections), goroutines: up(m.agentPeaks?.goroutines, goroutines) };
}

/** One repetition on this machine; a failure is kept as the measurement's error and the run goes on. */
export async function runLocalRepetition(ctx: LocalRepetitionContext): Promise<RepMeasurement> {
  const r = openRepetition(ctx);
  return runRepetitionSteps(r, ctx.scenario.warmup, ctx.signal, 'record', {
    start: async () => {
      await startAgentAndPods(r);
      return true;
    },
    startSamplers: () => startSamplers(r),
    storm: () => loadPhase(r),
    finish: () => finishRepetition(r),
  });
}

/** The repetition's record (folder, samples file, timeline, empty measurement) and nothing started yet. */
function openRepetition(ctx: LocalRepetitionContext): Repetition {
  const record = openRepetitionRecord(ctx.runDir, variantDirName(ctx.variant.name, ctx.rep), ctx.rep, ctx.variant.agent.memoryLimit ?? 0, ctx.onSample);
  return {
    ...record,
    ctx,
    tmpDir: runTempDir(ctx.runId),
    sandbox: null,
    target: null,
    agentCpu: { last: null, inLoad: 0, series: new CumulativeCpuSeries() },
    machineAtCalls: null,
    kubeletAtCalls: null,
    fetches: null,
    callsWindow: null,
  };
}

/** The sandbox (pods' cgroups, kubelet emulator) and the agent under test, started and ready. */
async function startAgentAndPods(r: Repetition): Promise<void> {
  const { ctx, timeline } = r;
  const { scenario: s, variant, rep } = ctx;
  timeline.enter('starting-pods');
  const kubelet = targetKind(variant.agent.kind).kubelet(variant.agent);
  const sandbox = (r.sandbox = await createSandbox({
    runId: newRunId(`${ctx.runId.split('-')[0]}-${variant.name.slice(0, 6)}-r${rep}`),
    pods: s.load.pods,
    cgroupDriver: s.load.cgroupDriver,
    uidMode: s.load.uidMode,
    ...(s.load.bystanders ? { bystanders: bystanderSandboxOptions(s.load.bystanders) } : {}),
    ...(s.load.podLifetime !== undefined ? { podLifetimeMs: s.load.podLifetime } : {}),
    ...(kubelet
      ? {
          kubelet: {
            latencyMs: kubelet.latency,
            ...(kubelet.latencyModel
              ? {
                  latencyModel: {
                    baseMs: kubelet.latencyModel.base,
                    perConcurrentMs: kubelet.latencyModel.perConcurrent,
                    perMiBMs: kubelet.latencyModel.perMiB,
                  },
                }
              : {}),
            serviceTimeMs: kubelet.serviceTime,
            failureRate: kubelet.failureRate,
            visibilityDelayMs: kubelet.visibilityDelay,
            tls: kubelet.tls,
            ...(kubelet.fillerPods !== undefined ? { fillerPods: kubelet.fillerPods } : {}),
            ...podListEmulatorOptions(kubelet.podList),
            ...(kubelet.token !== undefined ? { token: kubelet.token } : {}),
          },
        }
      : {}),
  }));
  if (kubelet) r.fetches = recordKubeletFetches(r, sandbox.kubelet);
  ctx.onEnvironment?.({ podFidelity: sandbox.fidelity });
  ensureRunFolder(r.tmpDir, otherPodIds({ uidMode: s.load.uidMode, bystandersUid: s.load.bystanders?.uid }) !== null);
  const onDeath = (v: DeathVerdict) => {
    if (v.cause !== 'stopped') noteDeath(r, s.oomKillsOutsideLoad, { cause: v.cause, detail: v.detail });
  };
  const target = (r.target = ctx.targets.create(variant.agent, {
    variant: variant.name,
    rep,
    dir: r.dir,
    tmpDir: r.tmpDir,
    runId: ctx.runId,
    host: ctx.host,
    ...(ctx.agentCpus !== undefined ? { agentCpus: ctx.agentCpus } : {}),
    sandbox,
    signal: ctx.signal,
    event: (type, detail) => timeline.event(type, detail),
    onDeath,
    faultControls: s.faults.length > 0,
  }));
  await target.start();
  r.m.memoryLimitBytes = target.limitBytes;
  ctx.onDescribe?.(target.describe());
}

/** The target's samplers into the samples file (as the warm-up begins), and what the repetition takes from their lines. */
function startSamplers(r: Repetition): void {
  const { timeline, m } = r;
  const loop = startSamplerLoop(r, r.target!.samplers());
  loop.onSample((line) => {
    if (line.kind === 'memory' && line.cpuSeconds !== null) {
      countAgentCpu(r, line.cpuSeconds);
      r.agentCpu.series.add(line.t, line.cpuSeconds);
    }
    if (line.kind === 'metrics' && timeline.phase === 'load') notePeaks(m, line);
  });
}

/** The load through the LoadDriver, the faults from the calls' start, and the load's figures. */
async function loadPhase(r: Repetition): Promise<void> {
  const { ctx, timeline, m } = r;
  const s = ctx.scenario;
  const target = r.target!;
  const sandbox = r.sandbox!;
  // The warm-up may have been cut short by an interrupt; the load starts now either way.
  const loadOrigin = Date.now();
  let callsAt: number | null = null;
  timeline.fix(loadOrigin);
  timeline.enter('starting-pods', loadOrigin);
  timeline.event('load-start');
  const result = await ctx.load.run({
    scenario: s,
    socket: target.socket,
    sandbox,
    durationMs: s.duration,
    signal: ctx.signal,
    origin: loadOrigin,
    ...(target.podsServed ? { beforeCalls: () => target.podsServed!(ctx.signal) } : {}),
    onCallsStarted: (at, storm) => {
      callsAt = at;
      r.kubeletAtCalls = sandbox.kubelet.requests;
      r.machineAtCalls = readMachineCpu();
      // The list the storm meets; an agent without emulator settings (external) asks its own kubelet, not this one.
      if (targetKind(ctx.variant.agent.kind).kubelet(ctx.variant.agent) !== null) m.podList = { ...sandbox.kubelet.podList(), maxBytes: 0 };
      timeline.enter('load', at);
      // Faults count from the moment the calls start: pods take a while to come up here.
      if (s.faults.length) startFaults(r, s.faults, at, ctx.signal, faultTarget(target, sandbox, storm ?? null));
    },
    onSecond: (sample) => {
      // The agent's CPU in the same second beside the generator's (its samples are every 100 ms).
      if (sample.cpu) sample.cpu.agentCores = r.agentCpu.series.coresBetween(sample.t, sample.t + 1000);
      r.loop!.emit(sample);
      // Recovery after a fault is measured on the bystanders' seconds (t: the second's end, from the calls' start).
      if (callsAt !== null) feedBystanders(r, sample.bystanders, sample.t - (callsAt - loadOrigin) + 1000);
    },
  });
  const machineBusy = busyCores(r.machineAtCalls, readMachineCpu());
  if (timeline.phase === 'starting-pods') timeline.enter('load', result.callsStartedAt);
  timeline.event('note', `calls started at t=${result.callsStartedAt - loadOrigin} ms (after the pods came up)`);
  await endFaults(r);
  timeline.enter('drain', result.callsStartedAt + result.loadSeconds * 1000);
  timeline.event('load-end');
  noteDowntime(m, target.downtimeMs());
  m.counts = result.counts;
  m.loadSeconds = result.loadSeconds;
  m.callsAtMs = timeline.t(result.callsStartedAt);
  m.histograms = result.histograms;
  m.workerMemoryBytes = result.workerMemoryBytes;
  if (result.calls !== undefined) {
    m.generator = {
      calls: result.calls,
      workersStarted: result.workersStarted ?? 0,
      workerCpuSeconds: result.workerCpuSeconds ?? 0,
      lateCalls: result.late?.calls ?? 0,
      maxLateSeconds: result.late?.maxSeconds ?? 0,
      offeredWorkers: offeredWorkers(s),
      cores: cpus().length,
      ...(result.workerCrashes !== undefined ? { workerCrashes: result.workerCrashes } : {}),
    };
  }
  if (result.client) m.loadClient = loadClientRecord(s.load.client, result.client, result.clientFallback);
  m.bystanders = result.bystanders;
  if (r.kubeletAtCalls !== null) m.kubelet = { requests: sandbox.kubelet.requests - r.kubeletAtCalls, seconds: result.loadSeconds };
  r.callsWindow = { from: result.callsStartedAt, to: result.callsStartedAt + result.loadSeconds * 1000, seconds: result.loadSeconds };
  m.machine = {
    busyCores: machineBusy,
    agentCpuCores: r.agentCpu.last === null || result.loadSeconds <= 0 ? null : r.agentCpu.inLoad / result.loadSeconds,
    loadAverage: loadAverage1m(),
    ...(result.cpu ? { generatorCores: result.cpu.generatorCores, runnerCores: result.cpu.runnerCores } : {}),
    agentCpus: ctx.agentCpus !== undefined ? (parseCpuList(ctx.agentCpus)?.length ?? null) : null,
  };
}

/** Adds the agent's CPU since its last reading when the load runs (a restarted agent counts from 0 again). */
function countAgentCpu(r: Repetition, cumulative: number): void {
  const { last } = r.agentCpu;
  if (last !== null && r.timeline.phase === 'load') r.agentCpu.inLoad += cumulative >= last ? cumulative - last : cumulative;
  r.agentCpu.last = cumulative;
}

/** Undoes faults, stops the agent (samplers still running), takes the last figures, reaps everything. */
async function finishRepetition(r: Repetition): Promise<void> {
  const { ctx, timeline, m, target, loop } = r;
  if (!timeline.fixed) timeline.fix(Date.now());
  if (ctx.signal.aborted) timeline.event('interrupted');
  timeline.enter('stop');
  // A fault still holding the agent (frozen, squeezed, throttled) is undone before the agent is stopped.
  await undoFaults(r);
  if (target && m.downtimeSeconds === 0) noteDowntime(m, target.downtimeMs());
  // The agent is stopped while the samplers still run, so a death during the stop is on the timeline.
  await target?.stop().catch((err: Error) => timeline.event('note', `stopping the agent failed: ${err.message}`));
  if (loop) {
    await loop.stop();
    m.samplerErrors = loop.errors();
    for (const [name, e] of Object.entries(m.samplerErrors)) timeline.event('note', `sampler ${name} failed ${e.count}× (first: ${e.first})`);
  }
  if (target) recordAgentFigures(r, target);
  closeMeasurement(r);
  // The agent is stopped: every request it made is over, and its line written before the file closes.
  if (r.fetches && r.callsWindow) m.kubeletFetches = r.fetches.figures(r.callsWindow.from, r.callsWindow.to, r.callsWindow.seconds);
  r.fetches?.stop();
  r.writer.close();
  if (m.podList && r.sandbox) m.podList.maxBytes = Math.max(m.podList.bytes, r.sandbox.kubelet.stats().maxDocumentBytes);
  await r.sandbox?.close().catch(() => {});
  await target?.release?.();
}

/** Restarts and the peaks: usage from the kernel's high-water mark, else the samples; never an invented 0. */
function recordAgentFigures(r: Repetition, target: AgentTarget): void {
  const { m, timeline, loop } = r;
  m.restarts = target.restarts;
  // Usage from one source: the kernel's high-water mark over every agent start, deaths included.
  // The working set and RSS have no kernel mark: their highest samples.
  let kernelPeak: number | null = null;
  try {
    kernelPeak = target.peakBytes();
  } catch (err) {
    timeline.event('note', `the kernel's memory high-water mark could not be read: ${(err as Error).message}`);
  }
  const sampled = loop?.peaks() ?? null;
  m.peaks = { ...(sampled ?? NO_PEAKS), usageBytes: kernelPeak ?? sampled?.usageBytes ?? null };
  m.peakSource = kernelPeak !== null ? 'kernel' : sampled !== null ? 'samples' : 'unmeasured';
  // No reading at all is no measurement, not a peak of 0 that would pass maxPeakMemory.
  if (kernelPeak === null && sampled === null && m.loadSeconds > 0) {
    const why = Object.entries(m.samplerErrors ?? {}).map(([n, e]) => `${n}: ${e.first}`);
    m.error ??= `no memory reading of the agent was taken${why.length ? ` (${why.join('; ')})` : ''}`;
  }
}

/** The storm's workers plus each burst's extra ones: what the scenario asked the generator for. */
function offeredWorkers(s: Scenario): number {
  return s.load.pods * s.load.workersPerPod + s.faults.reduce((n, f) => n + (f.action === 'burst' ? f.workers : 0), 0);
}

const pods = (n: number) => `${n} pod${n === 1 ? '' : 's'}`;

/** How a burst's wave went, for its fault-end event: whether and from when its workers called. */
function waveEndDetail(w: StormWave, end: StormWaveEnd): string {
  const calling =
    end.calling === 0
      ? 'none was calling yet (their start-up outlasted the window)'
      : `${end.calling === w.pods ? 'all' : `${end.calling} of ${w.pods}`} calling from ${end.readyMs} ms after the start`;
  const failed = end.failures.length ? `; ${pods(end.failures.length)} failed to start: ${end.failures[0]}` : '';
  return `${pods(w.pods)} of the wave ended (${w.workers} workers), ${calling}${failed}`;
}

/** What the fault schedule acts on here: the agent's process and cgroup, the kubelet emulator, the storm's pods. */
function faultTarget(target: AgentTarget, sandbox: Sandbox, storm: StormControl | null): FaultTarget {
  return {
    socket: target.socket,
    agentPid: () => target.pid(),
    agentCgroup: target.cgroup(),
    kubelet: sandbox.kubelet.faults,
    waitAgentAnswers: (sig) => waitAgentAnswers(target.socket, sig),
    ...(target.kill ? { killAgent: (sig: 'SIGKILL' | 'SIGTERM') => target.kill!(sig) } : {}),
    churnPods: (n) => sandbox.replacePods(n),
    // A burst is a wave of new storm pods (new UIDs) the kubelet lists; their pods end at the window's end.
    ...(storm
      ? {
          startBurst: async (n: number) => {
            const wave = await storm.addWorkers(n);
            return {
              detail: `${wave.workers} extra storm workers in ${pods(wave.pods)} started (${wave.podUids.join(', ')})`,
              stop: async () => waveEndDetail(wave, await wave.stop()),
            };
          },
        }
      : {}),
  };
}
