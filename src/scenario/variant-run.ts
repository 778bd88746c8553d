// One repetition of one variant: sandbox and kubelet emulator, the agent under test (a target),
// samplers, warm-up, the load, and the teardown — every piece owned and reaped here. Each phase is
// marked on the timeline, and every agent death carries the phase it happened in.
import { mkdirSync, rmSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import type { CgroupHost } from '../cgroup/index.js';
import type { DeathRecord, EventSample, FaultResult, MetricsSample, Phase, SampleLine, VariantAgentRecord } from '../contract/index.js';
import { bystanderSandboxOptions } from '../load/index.js';
import { NdjsonWriter, SamplerLoop, type Sampler } from '../sample/index.js';
import { createSandbox, newRunId, tempRoot, type Sandbox } from '../sandbox/index.js';
import { createTarget, type AgentTarget, type DeathVerdict } from '../target/index.js';
import { FaultScheduler, waitAgentAnswers } from '../fault/index.js';
import type { RepMeasurement } from './aggregate.js';
import type { LoadDriver } from './load-driver.js';
import { variantDirName } from './run-folder.js';
import type { Scenario, Variant } from './schema.js';

export interface VariantRunContext {
  scenario: Scenario;
  variant: Variant;
  runDir: string;
  runId: string;
  rep: number;
  host: CgroupHost | null;
  /** Scenario isolation in force: the agent's cgroup is pinned to these CPUs (the runner already is off them). */
  agentCpus?: string;
  load: LoadDriver;
  signal: AbortSignal;
  /** Live view for the progress display. */
  onSample?(line: SampleLine): void;
  /** Called once the sandbox exists (its fidelity goes into the results). */
  onSandbox?(sandbox: Sandbox): void;
  /** What really ran (binary, version), once the agent has started. */
  onDescribe?(agent: VariantAgentRecord): void;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

/** Per-agent-lifetime maxima of the cumulative rejection counters, summed across restarts. */
class RejectionTotals {
  #done: Record<string, number> = {};
  #current: Record<string, number> = {};
  observe(m: MetricsSample): void {
    const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);
    // A counter that went down means a new agent process: bank the previous one's totals.
    if (sum(m.rejectedByKeyType) < sum(this.#current)) this.#bank();
    this.#current = { ...m.rejectedByKeyType };
  }
  #bank(): void {
    for (const [k, v] of Object.entries(this.#current)) this.#done[k] = (this.#done[k] ?? 0) + v;
    this.#current = {};
  }
  total(): Record<string, number> {
    this.#bank();
    return this.#done;
  }
}

/**
 * The repetition's timeline: t = ms since the load phase's start. Until the agent is ready that
 * start is unknown, so early events are held with their wall-clock time and written once it is fixed.
 */
class Timeline {
  #origin: number | null = null;
  #held: Array<{ at: number; line: Omit<EventSample, 't'> }> = [];
  phase: Phase = 'starting-pods';
  constructor(private readonly emitLine: (line: SampleLine) => void) {}
  t(at = Date.now()): number {
    return at - (this.#origin ?? at);
  }
  event(type: EventSample['type'], detail?: string, at = Date.now()): void {
    const line: Omit<EventSample, 't'> = { kind: 'event', type, ...(detail ? { detail } : {}) };
    if (this.#origin === null) this.#held.push({ at, line });
    else this.emitLine({ ...line, t: this.t(at) } as EventSample);
  }
  enter(phase: Phase, at = Date.now()): void {
    this.phase = phase;
    const line: Omit<EventSample, 't'> = { kind: 'event', type: 'phase', phase };
    if (this.#origin === null) this.#held.push({ at, line });
    else this.emitLine({ ...line, t: this.t(at) } as EventSample);
  }
  fix(origin: number): void {
    this.#origin = origin;
    for (const h of this.#held.splice(0)) this.emitLine({ ...h.line, t: h.at - origin } as EventSample);
  }
  get fixed(): boolean {
    return this.#origin !== null;
  }
}

function newMeasurement(dirName: string, limitBytes: number): RepMeasurement {
  return {
    runDir: dirName,
    memoryLimitBytes: limitBytes,
    peakMemoryBytes: 0,
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
}

export async function runVariant(ctx: VariantRunContext): Promise<RepMeasurement> {
  const { scenario: s, variant, rep } = ctx;
  const dirName = variantDirName(variant.name, rep);
  const dir = join(ctx.runDir, dirName);
  mkdirSync(dir, { recursive: true });
  const writer = new NdjsonWriter(join(dir, 'samples.ndjson'));
  const emit = (line: SampleLine) => {
    writer.write(line);
    ctx.onSample?.(line);
  };
  const timeline = new Timeline(emit);
  const m = newMeasurement(dirName, variant.agent.memoryLimit ?? 0);
  const deaths: DeathRecord[] = [];
  const onDeath = (v: DeathVerdict) => {
    if (v.cause === 'stopped') return;
    deaths.push({ rep, atMs: timeline.t(), phase: timeline.phase, cause: v.cause, detail: v.detail, counted: timeline.phase === 'load' || s.oomKillsOutsideLoad === 'count' });
  };

  let sandbox: Sandbox | null = null;
  let target: AgentTarget | null = null;
  let loop: SamplerLoop | null = null;
  let faults: FaultScheduler | null = null;
  const rejections = new RejectionTotals();
  const tmpDir = join(tempRoot(), ctx.runId);
  try {
    timeline.enter('starting-pods');
    const kubelet = variant.agent.kind === 'external' ? null : variant.agent.kubelet;
    sandbox = await createSandbox({
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
              failureRate: kubelet.failureRate,
              visibilityDelayMs: kubelet.visibilityDelay,
              tls: kubelet.tls,
              ...(kubelet.fillerPods !== undefined ? { fillerPods: kubelet.fillerPods } : {}),
              ...(kubelet.token !== undefined ? { token: kubelet.token } : {}),
            },
          }
        : {}),
    });
    ctx.onSandbox?.(sandbox);
    mkdirSync(tmpDir, { recursive: true, mode: 0o755 });
    target = createTarget(variant.agent, {
      variant: variant.name,
      rep,
      dir,
      tmpDir,
      runId: ctx.runId,
      host: ctx.host,
      ...(ctx.agentCpus !== undefined ? { agentCpus: ctx.agentCpus } : {}),
      sandbox,
      signal: ctx.signal,
      event: (type, detail) => timeline.event(type, detail),
      onDeath,
      faultControls: s.faults.length > 0,
    });
    await target.start();
    m.memoryLimitBytes = target.limitBytes;
    ctx.onDescribe?.(target.describe());

    // Until the load starts, t counts toward the planned start (negative during warm-up).
    timeline.fix(Date.now() + s.warmup);
    timeline.enter('warmup');
    const samplers: Sampler[] = target.samplers();
    loop = new SamplerLoop(samplers, writer, () => timeline.t());
    loop.onSample((line) => {
      ctx.onSample?.(line);
      if (line.kind === 'metrics') {
        if (line.inflightAttestations !== null) m.peakInflightAttestations = Math.max(m.peakInflightAttestations ?? 0, line.inflightAttestations);
        rejections.observe(line);
      }
    });
    loop.start();
    timeline.event('warmup-start');
    await sleep(s.warmup, ctx.signal);
    if (ctx.signal.aborted) return m;

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
      onCallsStarted: (at) => {
        callsAt = at;
        timeline.enter('load', at);
        // Faults count from the moment the calls start: pods take a while to come up here.
        if (s.faults.length && target && sandbox) faults = startFaults(s, target, sandbox, at, ctx.signal, timeline);
      },
      onSecond: (sample) => {
        loop!.emit(sample);
        // Recovery after a fault is measured on the bystanders' seconds (t: the second's end, from the calls' start).
        if (faults && sample.bystanders && callsAt !== null) {
          const b = sample.bystanders;
          (faults as FaultScheduler).bystanderSecond({ t: sample.t - (callsAt - loadOrigin) + 1000, calls: b.ok + b.rateLimited + b.deadlineExceeded + b.error, ok: b.ok });
        }
      },
    });
    if (timeline.phase === 'starting-pods') timeline.enter('load', result.callsStartedAt);
    timeline.event('note', `calls started at t=${result.callsStartedAt - loadOrigin} ms (after the pods came up)`);
    if (faults) m.faults = recordsOf(await (faults as FaultScheduler).stop(), rep);
    timeline.enter('drain', result.callsStartedAt + result.loadSeconds * 1000);
    timeline.event('load-end');
    m.downtimeSeconds = Math.round(target.downtimeMs() / 100) / 10;
    m.counts = result.counts;
    m.loadSeconds = result.loadSeconds;
    m.histograms = result.histograms;
    m.workerMemoryBytes = result.workerMemoryBytes;
    if (result.calls !== undefined) {
      m.generator = {
        calls: result.calls,
        workersStarted: result.workersStarted ?? 0,
        workerCpuSeconds: result.workerCpuSeconds ?? 0,
        offeredWorkers: s.load.pods * s.load.workersPerPod,
        cores: cpus().length,
      };
    }
    m.bystanders = result.bystanders;
    return m;
  } catch (err) {
    if (!timeline.fixed) timeline.fix(Date.now());
    m.error = (err as Error).message;
    timeline.event('note', `variant run failed: ${(err as Error).message}`);
    return m;
  } finally {
    if (!timeline.fixed) timeline.fix(Date.now());
    if (ctx.signal.aborted) timeline.event('interrupted');
    timeline.enter('stop');
    // A fault still holding the agent (frozen, squeezed, throttled) is undone before the agent is stopped.
    if (faults && !m.faults) m.faults = recordsOf(await (faults as FaultScheduler).stop().catch(() => []), rep);
    if (target && m.downtimeSeconds === 0) m.downtimeSeconds = Math.round(target.downtimeMs() / 100) / 10;
    // The agent is stopped while the samplers still run, so a death during the stop is on the timeline.
    await target?.stop().catch((err: Error) => timeline.event('note', `stopping the agent failed: ${err.message}`));
    if (loop) {
      await loop.stop();
      m.samplerErrors = loop.errors();
      for (const [name, e] of Object.entries(m.samplerErrors)) timeline.event('note', `sampler ${name} failed ${e.count}× (first: ${e.first})`);
    }
    if (target) {
      m.oomKills = deaths.filter((d) => d.counted && (d.cause === 'oom-kill' || d.cause === 'emulated-oom')).length;
      m.restarts = target.restarts;
      // One peak from one source: the kernel's high-water mark over every agent start, deaths included.
      const kernelPeak = target.peakBytes();
      m.peakMemoryBytes = kernelPeak ?? loop?.maxPeakBytes() ?? 0;
      m.peakSource = kernelPeak !== null ? 'kernel' : 'samples';
    }
    m.deaths = deaths;
    m.rejectionsByKeyType = rejections.total();
    writer.close();
    await sandbox?.close().catch(() => {});
    const cg = target?.cgroup();
    if (cg && variant.agent.kind !== 'external') await cg.remove().catch((err: Error) => process.stderr.write(`attestorm: cannot remove the agent cgroup ${cg.path}: ${err.message}\n`));
    if (target && variant.agent.kind !== 'external') rmSync(target.socket, { force: true });
  }
}

/** The fault schedule of one repetition, started when the calls start. */
function startFaults(s: Scenario, target: AgentTarget, sandbox: Sandbox, at: number, signal: AbortSignal, timeline: Timeline): FaultScheduler {
  const scheduler = new FaultScheduler({
    faults: s.faults,
    loadStart: at,
    signal,
    target: {
      socket: target.socket,
      agentPid: () => target.pid(),
      agentCgroup: target.cgroup(),
      kubelet: sandbox.kubelet.faults,
      waitAgentAnswers: (sig) => waitAgentAnswers(target.socket, sig),
      ...(target.kill ? { killAgent: (sig: 'SIGKILL' | 'SIGTERM') => target.kill!(sig) } : {}),
      churnPods: (n) => sandbox.replacePods(n),
    },
    onEvent: (e) => timeline.event(e.type, `faults[${e.index}] ${e.action}: ${e.detail}`),
  });
  scheduler.start();
  return scheduler;
}

function recordsOf(records: ReadonlyArray<Omit<FaultResult, 'rep'>>, rep: number): FaultResult[] {
  return records.map((r) => ({ rep, ...r }));
}
