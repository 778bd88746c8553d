// A load run's plan, settled before any pod starts: the validated options, where the pods run, the
// bundles their processes start from (and the client that really runs), and what each pod is told.
import { accessSync, chmodSync, constants } from 'node:fs';
import { availableParallelism } from 'node:os';
import { cpuQuotaCores } from '../cgroup/index.js';
import { ConfigError } from '../errors.js';
import type { ResolvedBystanderLoadOptions } from './bystanders-schema.js';
import { WORKER_ENV, WORKER_EXEC_ARGV, loadBundles, type LoadBundles } from './bundle.js';
import { checkLoadCapacity, loadPlanSize } from './capacity.js';
import { validateLoadOptions, type LoadOptions, type ResolvedLoadOptions } from './options.js';
import { localPodHost, type PodHost } from './pod-host.js';
import type { LoadMethod, PodConfig } from './worker/messages.js';

export interface LoadPlan {
  /** The options as asked (client included: `built.client` says which one runs). */
  opts: ResolvedLoadOptions;
  bys: ResolvedBystanderLoadOptions | null;
  host: PodHost;
  built: LoadBundles;
  /** The bundles as the pods' processes reach them. */
  bundles: { pod: string; worker: string };
  startTimeoutMs: number;
  podConfig: PodConfig;
  bystanderConfig: PodConfig | null;
}

/**
 * Start timeout per pod: forking hundreds of node processes takes a while. Each worker's start-up
 * costs ~170 ms of CPU here (bench/workers.ts), spread over the CPUs this process may use — the
 * cpuset's (availableParallelism(); with the agent isolated on a CPU of its own the pods get the
 * others) or a CPU quota's (--cpu-budget, a container), whichever is smaller. 600 ms per worker
 * leaves room for a machine that is busy besides: a slow start is not a failed one.
 */
export function podStartTimeoutMs(workersPerPod: number, totalWorkers: number, cpus = Math.min(availableParallelism(), cpuQuotaCores() ?? Infinity)): number {
  return 30_000 + Math.ceil((600 * Math.max(workersPerPod, totalWorkers)) / Math.max(0.5, cpus));
}

/** Validates the options against the host and builds the bundles; refuses a load the machine cannot hold. */
export async function planLoad(input: LoadOptions, sandbox: PodHost | undefined): Promise<LoadPlan> {
  const opts = validateLoadOptions(input);
  const bys: ResolvedBystanderLoadOptions | null = opts.bystanders ?? null;
  const host: PodHost = sandbox ?? localPodHost(opts.pods, bys?.pods ?? 0);
  if ((host.bystanderPods ?? 0) !== (bys?.pods ?? 0)) {
    throw new ConfigError(
      `load.bystanders.pods is ${bys?.pods ?? 0} but the sandbox hosts ${host.bystanderPods ?? 0} bystander pods: create the sandbox with bystanders: { pods: ${bys?.pods ?? 0} }`,
    );
  }
  const built = await loadBundles(opts.client);
  if (built.fallback) process.stderr.write(`attestorm load: ${built.fallback}\n`);
  // Refused before any pod starts: the machine must hold the workers of the client that will run.
  checkLoadCapacity(loadPlanSize({ ...opts, client: built.client }));
  const share = (file: string) => host.shareWithPods?.(file) ?? file;
  const bundles = { pod: share(built.pod), worker: share(built.worker) };
  // A shared copy of the native binary must stay executable for the pods' uid.
  if (built.client === 'native' && bundles.worker !== built.worker) ensureExecutable(bundles.worker);
  const bystanderWorkers = bys ? bys.pods * bys.workersPerPod : 0;
  const startTimeoutMs = podStartTimeoutMs(Math.max(opts.workersPerPod, bys?.workersPerPod ?? 0), opts.pods * opts.workersPerPod + bystanderWorkers);
  const { podConfig, bystanderConfig } = podConfigs({ ...opts, client: built.client }, bundles, startTimeoutMs);
  return { opts, bys, host, built, bundles, startTimeoutMs, podConfig, bystanderConfig };
}

function ensureExecutable(file: string): void {
  try {
    accessSync(file, constants.X_OK);
  } catch {
    chmodSync(file, 0o755);
  }
}

function perWorkerMaxCalls(opts: ResolvedLoadOptions): number | null {
  return opts.maxCalls === undefined ? null : Math.max(1, Math.ceil(opts.maxCalls / (opts.pods * opts.workersPerPod)));
}

/**
 * What a storm pod is told to run: its workers' call loop from the load options. Local pods and
 * kind's generator pods both start from it; maxCalls bounds each worker (null: time alone).
 */
export function podConfigFor(opts: ResolvedLoadOptions, workerBundle: string, startTimeoutMs: number, maxCalls: number | null): PodConfig {
  return {
    worker: {
      socket: opts.socket,
      client: opts.client,
      connection: opts.connection,
      rate: opts.rate ?? null,
      deadlineMs: opts.deadlineMs,
      retry: opts.retry,
      methods: Object.entries(opts.methods).filter(([, w]) => (w ?? 0) > 0) as Array<[LoadMethod, number]>,
      audience: opts.audience,
      maxCalls,
    },
    workers: opts.workersPerPod,
    workerBundle,
    startTimeoutMs,
    workerExecArgv: WORKER_EXEC_ARGV,
    workerEnv: { ...WORKER_ENV },
    workerNice: null,
  };
}

/** What each storm pod and each bystander pod is told to run. */
function podConfigs(
  opts: ResolvedLoadOptions,
  bundles: { worker: string },
  startTimeoutMs: number,
): { podConfig: PodConfig; bystanderConfig: PodConfig | null } {
  const bys = opts.bystanders ?? null;
  const podConfig = podConfigFor(opts, bundles.worker, startTimeoutMs, perWorkerMaxCalls(opts));
  // Bystanders: a slow open loop on one method, bounded by time alone, on the storm's client.
  const bystanderConfig: PodConfig | null = bys && {
    ...podConfig,
    worker: {
      ...podConfig.worker,
      connection: bys.connection,
      rate: bys.rate,
      deadlineMs: bys.deadlineMs,
      retry: bys.retry,
      methods: [[bys.method, 1]],
      maxCalls: null,
    },
    workers: bys.workersPerPod,
  };
  return { podConfig, bystanderConfig };
}
