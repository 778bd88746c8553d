// The real load driver: the scenario's load block handed to src/load's forking-worker generator,
// its per-second samples placed on the variant run's timeline.
import {
  bystanderLoadOptions,
  checkLoadCapacity,
  loadPlanSize,
  mergeEncodedHistograms,
  runLoad,
  summarizeHistogram,
  validateLoadOptions,
  type LoadOptions,
} from '../load/index.js';
import { PlatformError } from '../errors.js';
import { podUidProblem, tempRoot } from '../sandbox/index.js';
import { targetKind } from '../targets/index.js';
import type { LoadDriver, LoadPhaseOptions, LoadPhaseResult } from './load-driver.js';
import type { Scenario } from './schema.js';

export function loadOptionsFor(s: Scenario, socket: string): LoadOptions {
  return {
    socket,
    pods: s.load.pods,
    workersPerPod: s.load.workersPerPod,
    durationMs: s.duration,
    connection: s.load.connection,
    client: s.load.client,
    ...(s.load.rate !== undefined ? { rate: s.load.rate } : {}),
    deadlineMs: s.load.deadline,
    retry: s.load.retry,
    methods: s.load.methods,
    audience: s.load.audience,
    ...(s.load.bystanders ? { bystanders: bystanderLoadOptions(s.load.bystanders) } : {}),
  };
}

export const stormLoadDriver: LoadDriver = {
  validate(s, where = 'local') {
    // The socket is chosen per variant; the longest one stands in for it.
    const sockets = s.variants.map((v) => targetKind(v.agent.kind).socket?.(v.agent) ?? `/tmp/attestorm/placeholder-run-id/${v.name}.r1.sock`);
    const resolved = sockets.map((socket) => validateLoadOptions(loadOptionsFor(s, socket), 'load'));
    // The machine must hold the storm, its bystanders and every burst's wave at once, and the agents
    // started here a connection per worker (the client asked for: a fallback to h2 is checked again).
    const burstWorkers = s.faults.reduce((n, f) => n + (f.action === 'burst' ? f.workers : 0), 0);
    const agentHere = s.variants.some((v) => targetKind(v.agent.kind).started);
    if (resolved[0] && where === 'local') checkLoadCapacity(loadPlanSize(resolved[0], { workers: burstWorkers, agentHere }));
    // Pods of another uid must be able to start node and read their bundles' copies.
    const uidProblem = podUidProblem({ uidMode: s.load.uidMode, bystandersUid: s.load.bystanders?.uid }, tempRoot());
    if (uidProblem) throw new PlatformError(`load.${uidProblem}`);
  },

  async run(o: LoadPhaseOptions): Promise<LoadPhaseResult> {
    // The generator counts seconds from the moment it releases its workers (pods take a while to
    // fork); that moment, reported as it happens, places its seconds on our timeline.
    let offset = 0;
    const summary = await runLoad(loadOptionsFor(o.scenario, o.socket), {
      sandbox: o.sandbox as never,
      signal: o.signal,
      ...(o.beforeCalls ? { beforeGo: o.beforeCalls } : {}),
      onGo: (t0, storm) => {
        offset = t0 - o.origin;
        o.onCallsStarted?.(t0, storm);
      },
      onSecond: (sample) => o.onSecond({ ...sample, t: sample.t + offset }),
    });
    return {
      counts: {
        ok: summary.totals.ok,
        rateLimited: summary.totals.rateLimited,
        deadlineExceeded: summary.totals.deadlineExceeded,
        error: summary.totals.error,
      },
      loadSeconds: summary.durationMs / 1000,
      callsStartedAt: Date.parse(summary.startedAt),
      histograms: summary.histograms,
      workerMemoryBytes: summary.workerMemoryBytes?.median ?? null,
      calls: summary.totals.calls,
      workersStarted: summary.workers,
      workerCpuSeconds: summary.workerCpuSeconds,
      client: summary.client,
      ...(summary.clientFallback ? { clientFallback: summary.clientFallback } : {}),
      workerCrashes: summary.workerCrashes,
      cpu: summary.cpu,
      late: summary.late,
      ...(summary.bystanders ? { bystanders: summary.bystanders } : {}),
    };
  },

  summarize(encoded) {
    const merged = encoded.length === 1 ? encoded[0]! : mergeEncodedHistograms(encoded);
    return summarizeHistogram(merged);
  },
};
