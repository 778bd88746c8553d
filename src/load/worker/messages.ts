// The typed IPC messages between the generator (parent), pod processes and workers. Types and two
// tiny constants only, so the worker bundles pull nothing else in from here. Data crosses process
// boundaries only as counters and encoded HDR histograms, never as percentiles, so every hop can
// merge exactly.

export type Outcome = 'ok' | 'rateLimited' | 'deadlineExceeded' | 'error';
export const OUTCOMES: readonly Outcome[] = ['ok', 'rateLimited', 'deadlineExceeded', 'error'];

export function zeroCounts(): Record<Outcome, number> {
  return { ok: 0, rateLimited: 0, deadlineExceeded: 0, error: 0 };
}

export type ConnectionMode = 'per-call' | 'per-worker' | 'per-retry';
export type RetryPolicy = 'immediate' | 'backoff';
/** The worker's client: gRPC written on node:http2 (lean), a real grpc-js client, or the native C worker. */
export type LoadClient = 'h2' | 'grpc-js' | 'native';
export type LoadMethod = 'FetchJWTSVID' | 'FetchX509SVID' | 'FetchX509Bundles' | 'FetchJWTBundles' | 'ValidateJWTSVID';

/** What every worker of a run is told (argv[2] of a worker, JSON). */
export interface WorkerConfig {
  socket: string;
  /** Which transport the worker bundle runs (the generator picks the bundle to match). */
  client: LoadClient;
  connection: ConnectionMode;
  /** Calls per second for this worker (open loop); null = closed loop. */
  rate: number | null;
  deadlineMs: number;
  retry: RetryPolicy;
  /** Weighted method mix, weights > 0. */
  methods: Array<[LoadMethod, number]>;
  audience: string;
  /** Calls this worker may make at most; null = unbounded (time still bounds it). */
  maxCalls: number | null;
}

/** What a pod process is told (argv[2] of a pod process, JSON). */
export interface PodConfig {
  worker: WorkerConfig;
  workers: number;
  /** Absolute path of the worker bundle, run with plain node (client native: the worker binary, run as it is). */
  workerBundle: string;
  /** How long each worker may take to report ready. */
  startTimeoutMs: number;
  /** Node flags for workers (heap sizing). */
  workerExecArgv: string[];
  /** Variables added to the workers' environment (allocator tuning). */
  workerEnv: Record<string, string>;
  /**
   * Nice value the pod process gives its workers, so that their CPU never starves its own merging
   * and forwarding of their data; null = leave them at the pod process's priority. Only set when
   * the pod has a CPU cgroup of its own: there a nice value only orders the pod's own processes.
   */
  workerNice: number | null;
}

/** One worker's or one pod's data for one second of the run. */
export interface IntervalData {
  /** Index of the second since the run's origin t0 (second k covers [t0+k s, t0+(k+1) s)). */
  second: number;
  counts: Record<Outcome, number>;
  /** Calls per gRPC status code name ("OK", "UNAVAILABLE"). */
  byCode: Record<string, number>;
  /** Compressed base64 HDR histograms of latency in microseconds, per outcome seen. */
  histograms: Partial<Record<Outcome, string>>;
}

/** Sent to start the load: the shared origin and the absolute end (epoch ms). */
export interface GoMessage {
  type: 'go';
  t0: number;
  endAt: number;
}

export type ToWorker = GoMessage | { type: 'stop' };
export type FromWorker =
  | { type: 'ready'; pid: number }
  | { type: 'interval'; data: IntervalData }
  /** Every second before `second + 1` has been shipped (sent each second, with or without calls). */
  | { type: 'flushed'; second: number }
  /**
   * cpuMs: user+system CPU the worker used from 'go' to its end (its load-phase cost).
   * longestOkGapMs: the longest time between successful calls' completions over the load phase,
   * start → first success and last success → end included (the whole phase when none succeeded).
   */
  | { type: 'done'; calls: number; cpuMs: number; longestOkGapMs: number }
  | { type: 'fatal'; message: string };

export type ToPod = GoMessage | { type: 'stop' };
export type FromPod =
  | { type: 'ready'; pid: number; workerPids: number[] }
  | { type: 'interval'; data: IntervalData }
  /**
   * Every second up to `second` has been forwarded: all its workers had shipped it (sent even when
   * the pod had no calls in it, so a quiet pod does not hold the emission of a second back).
   */
  | { type: 'progress'; second: number }
  /**
   * longestOkGapMs: the largest of its workers' (0 when no worker reported one). crashes: workers
   * that died after starting without reporting done (absent from older pod processes).
   */
  | { type: 'done'; calls: number; cpuMs: number; longestOkGapMs: number; crashes?: number }
  | { type: 'fatal'; message: string };
