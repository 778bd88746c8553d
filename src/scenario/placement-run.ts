// One repetition of one placement: sandbox and kubelet emulator, the agent in its memory cgroup,
// samplers, warm-up, the load, and the teardown — every piece owned and reaped here.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Cgroup, type CgroupHost } from '../cgroup/index.js';
import { RunError } from '../errors.js';
import { createSampler, NdjsonWriter, openExistingCgroup, SamplerLoop, type Sampler } from '../sample/index.js';
import { createSandbox, newRunId, tempRoot, type Sandbox } from '../sandbox/index.js';
import { agentConfigYaml, buildAgentConfig } from './agent-config.js';
import { AgentSupervisor } from './agent-supervisor.js';
import type { RepMeasurement } from './aggregate.js';
import type { LoadDriver } from './load-driver.js';
import { placementDirName } from './run-folder.js';
import type { EventSample, MetricsSample, PlacementName, SampleLine } from './results.js';
import type { Scenario, ScenarioPlacement } from './schema.js';

export interface PlacementRunContext {
  scenario: Scenario;
  runDir: string;
  runId: string;
  placement: ScenarioPlacement;
  rep: number;
  host: CgroupHost | null;
  agentBundle: string | null;
  load: LoadDriver;
  signal: AbortSignal;
  /** Live view for the progress display. */
  onSample?(placement: string, line: SampleLine): void;
  /** Called once the sandbox exists (its fidelity goes into the results). */
  onSandbox?(sandbox: Sandbox): void;
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

export async function runPlacement(ctx: PlacementRunContext): Promise<RepMeasurement> {
  const { scenario: s, placement, rep } = ctx;
  const dirName = placementDirName(placement, rep);
  const dir = join(ctx.runDir, dirName);
  mkdirSync(dir, { recursive: true });
  const writer = new NdjsonWriter(join(dir, 'samples.ndjson'));
  const external = placement === 'external';
  const limitBytes = external ? s.target?.memoryLimit ?? 0 : s.agent.memoryLimit;
  // t = ms since the load start. Until the agent is ready the planned start is unknown, so start-up
  // events are held with their wall-clock time and written once the origin is fixed.
  let origin: number | null = null;
  const t = () => Date.now() - (origin ?? Date.now());
  const held: Array<{ at: number; type: EventSample['type']; detail?: string }> = [];
  const emit = (line: SampleLine) => {
    writer.write(line);
    ctx.onSample?.(placement, line);
  };
  const event = (type: EventSample['type'], detail?: string) => {
    if (origin === null) held.push({ at: Date.now(), type, ...(detail ? { detail } : {}) });
    else emit({ kind: 'event', t: t(), type, ...(detail ? { detail } : {}) });
  };
  const fixOrigin = (at: number) => {
    origin = at;
    for (const h of held.splice(0)) emit({ kind: 'event', t: h.at - at, type: h.type, ...(h.detail ? { detail: h.detail } : {}) });
  };

  const measurement: RepMeasurement = {
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
  };

  let sandbox: Sandbox | null = null;
  let supervisor: AgentSupervisor | null = null;
  let agentCgroup: Cgroup | null = null;
  let loop: SamplerLoop | null = null;
  const rejections = new RejectionTotals();
  const tmpDir = join(tempRoot(), ctx.runId);
  try {
    sandbox = await createSandbox({
      runId: newRunId(`${ctx.runId.split('-')[0]}-${placement === 'external' ? 'ext' : placement.slice(0, 4)}-r${rep}`),
      pods: s.load.pods,
      cgroupDriver: s.load.cgroupDriver,
      uidMode: s.load.uidMode,
      ...(s.load.podLifetime !== undefined ? { podLifetimeMs: s.load.podLifetime } : {}),
      kubelet: {
        latencyMs: s.agent.kubelet.latency,
        failureRate: s.agent.kubelet.failureRate,
        visibilityDelayMs: s.agent.kubelet.visibilityDelay,
        tls: s.agent.kubelet.tls,
        ...(s.agent.kubelet.fillerPods !== undefined ? { fillerPods: s.agent.kubelet.fillerPods } : {}),
        ...(s.agent.kubelet.token !== undefined ? { token: s.agent.kubelet.token } : {}),
      },
    });

    ctx.onSandbox?.(sandbox);
    let socket: string;
    const samplers: Sampler[] = [];
    if (external) {
      const target = s.target!;
      socket = target.socket;
      if (target.cgroup) {
        const cg = openExistingCgroup(target.cgroup);
        if (!cg) throw new RunError(`target.cgroup ${target.cgroup} is not a memory cgroup directory (no memory.current or memory.usage_in_bytes)`);
        samplers.push(createSampler('cgroup-memory', { cgroup: cg, limitBytes, ...(target.pid ? { pid: () => target.pid! } : {}) }));
      } else {
        samplers.push(createSampler('process-memory', { pid: () => target.pid!, limitBytes }));
      }
    } else {
      mkdirSync(tmpDir, { recursive: true, mode: 0o755 });
      socket = join(tmpDir, `${placement}.r${rep}.sock`);
      const cfg = buildAgentConfig(s, placement as PlacementName, {
        socket,
        kubeletUrl: sandbox.kubeletUrl,
        tokenFile: sandbox.tokenFile,
        caFile: sandbox.caFile,
      });
      const configFile = join(dir, 'agent.yaml');
      writeFileSync(configFile, agentConfigYaml(cfg));
      if (ctx.host) {
        agentCgroup = Cgroup.create(ctx.host, `attestorm/${ctx.runId}/agent`, { cpu: s.agent.cpu.mode === 'cgroup' });
        agentCgroup.setMemoryLimit(limitBytes);
        if (s.agent.cpu.mode === 'cgroup') {
          // The weight must hold at every level where the agent's subtree meets the pods' subtrees.
          agentCgroup.setCpuWeight(s.agent.cpu.weight);
          Cgroup.create(ctx.host, `attestorm/${ctx.runId}`, { cpu: true }).setCpuWeight(s.agent.cpu.weight);
        }
        agentCgroup.resetPeak();
      }
      supervisor = new AgentSupervisor({
        bundle: ctx.agentBundle!,
        configFile,
        cgroup: agentCgroup,
        limitBytes,
        cpu: { mode: s.agent.cpu.mode, nice: s.agent.cpu.nice },
        logFile: join(dir, 'agent.log'),
        startTimeoutMs: s.agent.startTimeout,
        backoff: { initialMs: s.agent.restart.initialBackoff, maxMs: s.agent.restart.maxBackoff, resetAfterMs: s.agent.restart.resetAfter },
        event,
      });
      const sup = supervisor;
      samplers.push(
        agentCgroup
          ? createSampler('cgroup-memory', { cgroup: agentCgroup, pid: () => sup.pid(), limitBytes })
          : createSampler('process-memory', { pid: () => sup.pid(), limitBytes }),
      );
      samplers.push(createSampler('agent-metrics', { metricsUrl: () => sup.metricsUrl() }));
      await supervisor.start();
    }

    // Until the load starts, t counts toward the planned start (negative during warm-up).
    fixOrigin(Date.now() + s.warmup);
    loop = new SamplerLoop(samplers, writer, t);
    loop.onSample((line) => {
      ctx.onSample?.(placement, line);
      if (line.kind === 'memory') measurement.peakMemoryBytes = Math.max(measurement.peakMemoryBytes, line.peakBytes);
      if (line.kind === 'metrics') {
        if (line.inflightAttestations !== null) measurement.peakInflightAttestations = Math.max(measurement.peakInflightAttestations ?? 0, line.inflightAttestations);
        rejections.observe(line);
      }
    });
    loop.start();
    event('warmup-start');
    await sleep(s.warmup, ctx.signal);
    if (ctx.signal.aborted) return measurement;

    // The warm-up may have been cut short by an interrupt; the load starts now either way.
    const loadOrigin = Date.now();
    fixOrigin(loadOrigin);
    event('load-start');
    const result = await ctx.load.run({
      scenario: s,
      socket,
      sandbox,
      durationMs: s.duration,
      signal: ctx.signal,
      origin: loadOrigin,
      onSecond: (sample) => loop!.emit(sample),
    });
    event('note', `calls started at t=${result.callsStartedAt - loadOrigin} ms (after the pods came up)`);
    event('load-end');
    if (supervisor) measurement.downtimeSeconds = Math.round(supervisor.downtimeMs() / 100) / 10;
    measurement.counts = result.counts;
    measurement.loadSeconds = result.loadSeconds;
    measurement.histograms = result.histograms;
    measurement.workerMemoryBytes = result.workerMemoryBytes;
    return measurement;
  } catch (err) {
    if (origin === null) fixOrigin(Date.now());
    measurement.error = (err as Error).message;
    event('note', `placement failed: ${(err as Error).message}`);
    return measurement;
  } finally {
    if (origin === null) fixOrigin(Date.now());
    if (ctx.signal.aborted) event('interrupted');
    if (supervisor && measurement.downtimeSeconds === 0) measurement.downtimeSeconds = Math.round(supervisor.downtimeMs() / 100) / 10;
    await loop?.stop();
    if (supervisor) {
      await supervisor.stop();
      measurement.oomKills = supervisor.oomKills;
      measurement.restarts = supervisor.restarts;
    }
    measurement.rejectionsByKeyType = rejections.total();
    writer.close();
    await sandbox?.close().catch(() => {});
    await agentCgroup?.remove().catch(() => {});
    if (!external) rmSync(join(tmpDir, `${placement}.r${rep}.sock`), { force: true });
  }
}
