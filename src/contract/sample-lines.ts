// The NDJSON sample lines of <variant>.r<rep>/samples.ndjson: memory every 100 ms, load and metrics
// every second, and events. Times `t` are ms since that variant run's load start.
import type { Outcome, Phase } from './terms.js';

/** One NDJSON line of <placement>.r<rep>/samples.ndjson. */
export type SampleLine = MemorySample | LoadSample | MetricsSample | EventSample | KubeletFetchSample | KubeletFetchesSecond;

/** Every 100 ms: the agent's memory. */
export interface MemorySample {
  kind: 'memory';
  t: number;
  /** cgroup usage (memory.usage_in_bytes / memory.current), or RSS when emulated. */
  usageBytes: number;
  /**
   * usage − inactive file pages (v1 memory.stat total_inactive_file, v2 inactive_file), floored at 0:
   * what kubectl top counts. RSS when emulated (no page cache is charged to a process's RSS). null
   * where memory.stat could not be read; absent in folders of schemaVersion 2 and older.
   */
  workingSetBytes?: number | null;
  /** RSS charged to the cgroup (memory.stat total_rss / anon), VmRSS when emulated; null where not read (clusters' older samplers). */
  rssBytes: number | null;
  /**
   * What else the working set holds, from the same reading: kernel memory charged to the cgroup
   * (socket buffers, slab, stacks, page tables: v1 memory.kmem.usage_in_bytes, v2 memory.stat
   * kernel + sock), file pages on the active list (total_active_file / active_file) and shared
   * memory (total_shmem / shmem). null: not available (v1 without kernel-memory accounting);
   * absent where the sampler does not read them (emulated, clusters' samplers, older folders).
   */
  kernelBytes?: number | null;
  activeFileBytes?: number | null;
  shmemBytes?: number | null;
  /** Kernel high-water mark since the placement started (max_usage_in_bytes / memory.peak / VmHWM). */
  peakBytes: number;
  limitBytes: number;
  /** Cumulative agent CPU seconds (user+system). */
  cpuSeconds: number | null;
  /** Charges that met the limit so far (v1 memory.failcnt, v2 memory.events max); absent where not read. */
  limitHits?: number | null;
  /** v2 PSI: cumulative microseconds some / all of the agent's tasks stalled on memory; absent on v1 and where not read. */
  stallSomeUs?: number | null;
  stallFullUs?: number | null;
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
  /**
   * The most storm pods, and their workers, calling at once during this second (a pod counts from
   * its go until it finished): churn, crashes and a burst's extra pods show here. Absent in older folders.
   */
  stormPods?: number;
  stormWorkers?: number;
  /** The bystander pods' merged counts this second (every field above is the storm's alone). */
  bystanders?: BystanderSecond;
  /** CPU during this second, in cores: who could have held the storm back. Absent in older folders. */
  cpu?: SecondCpu;
}

/** LoadSample.cpu: one second's CPU in cores (CPU seconds per second); null where unreadable. */
export interface SecondCpu {
  /** The generator's pod processes and workers (storm and bystanders). */
  generatorCores: number | null;
  /** The runner process (merging the pods' seconds, sampling). */
  runnerCores: number | null;
  /** The agent under test (its cgroup's or process's CPU time). */
  agentCores?: number | null;
  /** Every process on the machine (/proc/stat). */
  machineBusyCores: number | null;
}

/** LoadSample.bystanders: the bystander pods' merged counts for one second. */
export interface BystanderSecond {
  ok: number;
  rateLimited: number;
  deadlineExceeded: number;
  error: number;
  /** Calls per gRPC status code name. */
  byCode: Record<string, number>;
  /** Base64 HDR histograms (microseconds) of latency per outcome, this second only. */
  histograms: Partial<Record<Outcome, string>>;
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
  type:
    | 'agent-start'
    | 'agent-ready'
    | 'phase'
    | 'warmup-start'
    | 'load-start'
    | 'load-end'
    | 'oom-kill'
    | 'agent-exit'
    | 'agent-restart'
    | 'interrupted'
    | 'note'
    | 'fault-start'
    | 'fault-end';
  /** For 'phase': the phase that starts at t. */
  phase?: Phase;
  detail?: string;
}

/**
 * One GET /pods the kubelet emulator served, written once it was over: its arrival (t), when its
 * answer started and ended being written, on the same timeline. Up to KUBELET_FETCH_LINE_CAP lines
 * a second (by the second the request ended); the rest of that second is one KubeletFetchesSecond.
 * Written by schemaVersion 3 runners from this kind's introduction; absent in older folders.
 */
export interface KubeletFetchSample {
  kind: 'kubelet-fetch';
  /** Arrival, ms on the timeline. */
  t: number;
  /** When the answer's head was written; null: never answered (stalled, or its client left first). */
  answerStart: number | null;
  /** When the last byte was handed to the kernel; null: never finished. */
  answerEnd: number | null;
  /** HTTP status; null: none. */
  status: number | null;
  bytes: number;
  /** Its wait for a turn in the emulator's service-time queue. */
  queueWaitMs: number;
  /** The connection it came on (1, 2, … in the order the emulator saw them). */
  conn: number;
  /** /pods requests in flight when it arrived, itself included. */
  inFlight: number;
  /** The client closed the connection before the answer was written whole. */
  abandoned?: true;
}

/** Individual kubelet-fetch lines written per second at most; the rest of a second is aggregated. */
export const KUBELET_FETCH_LINE_CAP = 20;

/** The /pods requests of one second beyond KUBELET_FETCH_LINE_CAP, folded into one line. */
export interface KubeletFetchesSecond {
  kind: 'kubelet-fetches';
  /** Start of the second (by the requests' ends), ms on the timeline. */
  t: number;
  /** Requests folded in here (not written one by one). */
  requests: number;
  /** By HTTP status ("200", "500", "none"). */
  byStatus: Record<string, number>;
  bytes: number;
  abandoned: number;
  /** Answer times (arrival to end) of the answered ones: base64 HDR histogram in microseconds. */
  answerHistogram: string;
}
