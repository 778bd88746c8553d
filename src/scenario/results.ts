// The run folder's data contract: results.json and the NDJSON sample lines. The runner writes
// these as it goes; `attestorm report` reads nothing else. Bump RESULTS_SCHEMA_VERSION on any
// incompatible change.
//
// Run folder layout:
//   <run>/scenario.yaml                 the scenario as given (after defaults are applied, as YAML)
//   <run>/results.json                  RunResults (written at the end, and rewritten after each placement)
//   <run>/<placement>.r<rep>/samples.ndjson   one SampleLine per line, appended while it runs
//   <run>/<placement>.r<rep>/agent.log        the agent's stderr
// `rep` counts from 1. Times `t` in samples are milliseconds since that placement run's load start
// (negative during start-up and warm-up).

export const RESULTS_SCHEMA_VERSION = 1;

export type PlacementName = 'pre-attestation' | 'post-attestation' | 'disabled';
export type Outcome = 'ok' | 'rateLimited' | 'deadlineExceeded' | 'error';

export interface LatencySummary {
  count: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
}

export interface ExpectationResult {
  /** The expect key as written in the scenario, e.g. "oomKilled", "maxPeakMemory", "minOkRps". */
  name: string;
  /** The scenario's value, as written ("200Mi", false, 5). */
  expected: unknown;
  /** What was measured, in the same unit as the rule. */
  actual: unknown;
  passed: boolean;
  /** "peak memory 142.3 MiB <= 200 MiB" / "OOM-killed 2 times, expected none". */
  message: string;
}

export interface PlacementResult {
  name: PlacementName;
  /** Per repetition folder names, e.g. ["pre-attestation.r1"]. */
  runDirs: string[];
  memoryLimitBytes: number;
  /** Highest kernel high-water mark seen (cgroup max_usage/peak, or VmHWM when emulated). */
  peakMemoryBytes: number;
  oomKills: number;
  restarts: number;
  downtimeSeconds: number;
  okRps: number;
  rejectedRps: number;
  errorRps: number;
  deadlineExceededRps: number;
  /** Latency per outcome over the whole load phase (merged HDR histograms). */
  latency: Partial<Record<Outcome, LatencySummary>>;
  peakInflightAttestations: number | null;
  /** Rate-limit rejections by key type from the agent's metrics (reference agent only). */
  rejectionsByKeyType: Record<string, number>;
  /** Real memory of one load worker (PSS), median over workers; null if not measured. */
  workerMemoryBytes: number | null;
  expectations: ExpectationResult[];
  /** True when the placement met every expectation. */
  passed: boolean;
  /** Set when the placement could not be run; the message says why. */
  error?: string;
}

export interface RunEnvironment {
  cgroupVersion: 'v1' | 'v2' | null;
  /** 'cgroup-oom': real kernel OOM kills in a memory cgroup; 'emulated-oom': RSS watchdog SIGKILL. */
  oomFidelity: 'cgroup-oom' | 'emulated-oom';
  /** 'cgroup-pods': pods have real kubelet-named cgroups; 'uid-only': no cgroups, OS UIDs only. */
  podFidelity: 'cgroup-pods' | 'uid-only';
  /** How the agent's CPU share is set: 'cpu-weight' (cgroup) or 'nice' or 'none'. */
  cpuShare: string;
  nodeVersion: string;
  platform: string;
  cpus: number;
  memoryBytes: number;
  hostname: string;
}

export interface RunResults {
  schemaVersion: typeof RESULTS_SCHEMA_VERSION;
  tool: { name: 'attestorm'; version: string };
  scenario: {
    name: string;
    description: string;
    /** Path of the scenario file as given on the command line. */
    file: string | null;
    /** The fully resolved scenario (defaults applied), as plain JSON. */
    resolved: unknown;
    /** Modeled costs in effect (non-default model.* settings), e.g. { attestationWorkingSet: "256Ki" }. */
    modeledCosts: Record<string, unknown>;
  };
  /** The exact command that reproduces this run. */
  command: string;
  environment: RunEnvironment;
  startedAt: string;
  endedAt: string | null;
  /** 'complete' | 'interrupted' (SIGINT) | 'failed' (the run could not be carried out). */
  status: 'complete' | 'interrupted' | 'failed';
  placements: PlacementResult[];
  /** True when every placement met every expectation. */
  passed: boolean;
}

/** One NDJSON line of <placement>.r<rep>/samples.ndjson. */
export type SampleLine = MemorySample | LoadSample | MetricsSample | EventSample;

/** Every 100 ms: the agent's memory. */
export interface MemorySample {
  kind: 'memory';
  t: number;
  /** cgroup usage (memory.usage_in_bytes / memory.current), or RSS when emulated. */
  usageBytes: number;
  rssBytes: number | null;
  /** Kernel high-water mark since the placement started (max_usage_in_bytes / memory.peak / VmHWM). */
  peakBytes: number;
  limitBytes: number;
  /** Cumulative agent CPU seconds (user+system). */
  cpuSeconds: number | null;
}

/** Every second: the generator's merged counts for that second. */
export interface LoadSample {
  kind: 'load';
  t: number;
  ok: number;
  rateLimited: number;
  deadlineExceeded: number;
  error: number;
  /** Calls per gRPC status code name, e.g. { OK: 10, UNAVAILABLE: 3 }. */
  byCode: Record<string, number>;
  /** Base64 HDR histograms (hdr-histogram-js encode, microseconds) of latency per outcome, this second only. */
  histograms: Partial<Record<Outcome, string>>;
  /** Per pod: ok/rejected/error this second. */
  pods?: Record<string, { ok: number; rateLimited: number; error: number }>;
}

/** Every second: a scrape of the reference agent's metrics endpoint. */
export interface MetricsSample {
  kind: 'metrics';
  t: number;
  inflightAttestations: number | null;
  openConnections: number | null;
  /** Cumulative rate-limit rejections by key type. */
  rejectedByKeyType: Record<string, number>;
  kubeletFetches: number | null;
}

export interface EventSample {
  kind: 'event';
  t: number;
  type: 'agent-start' | 'agent-ready' | 'warmup-start' | 'load-start' | 'load-end' | 'oom-kill' | 'agent-exit' | 'agent-restart' | 'interrupted' | 'note';
  detail?: string;
}
