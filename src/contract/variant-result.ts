// One variant's record in results.json (RunResults.variants): what ran, its memory, deaths, rates,
// latency, faults, storm, bystanders and expectations, summed or taken as medians across repetitions.
import type { ClusterNodesRecord } from './cluster-topology.js';
import type { KeyStrategyName, PlacementName } from './limiter-vocabulary.js';
import type { MemoryMeasure, MemoryPeaks } from './memory-measure.js';
import type { KubeletFetchRecord } from './kubelet-fetches.js';
import type { RepetitionFigures } from './repetition-figures.js';
import type { SpireGoroutineRecord } from './spire-goroutines.js';
import type { SpireHeapRecord } from './spire-heap.js';
import type { Outcome, Phase, Verdict } from './terms.js';

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
  /** What was measured, in the same unit as the rule; null when nothing was. */
  actual: unknown;
  verdict: Verdict;
  /**
   * What the verdict rests on: a measurement, or a bound (an OOM-killed agent's true peak is only
   * known to be at least its limit).
   */
  basis: 'measured' | 'bound' | 'none';
  /** "peak memory 142.3 MiB <= 200 MiB" / "OOM-killed 2 times, expected none". */
  message: string;
}

/** A target kind's name, as src/targets's registry knows it: reference, spire, external. */
export type AgentKind = string;

/** What was really run for a variant. */
export interface VariantAgentRecord {
  kind: AgentKind;
  /** The effective limiter placement; null when unknown (an external agent). */
  placement: PlacementName | null;
  /** The limiter key strategy; null when no limiter or unknown. */
  key: KeyStrategyName | null;
  /** The agent binary or bundle that ran. */
  binary?: string;
  /** Its version as it reports it. */
  version?: string;
  /** Environment variables the scenario added to the agent's (GOMAXPROCS, GOGC, grpc-go's GRPC_GO_* …); absent when none. */
  env?: Record<string, string>;
}

/**
 * The load workers' gRPC client: the one the scenario asked for and the one that ran. They differ
 * where native was asked for and no worker binary could be built or found (no C compiler): h2 runs
 * then, at several MiB more per worker, and `reason` says why.
 */
export interface LoadClientRecord {
  requested: string;
  ran: string;
  /** Why `ran` is not `requested`; absent when they agree. */
  reason?: string;
}

/** min / median / max across repetitions (one repetition: all three equal). */
export interface Range {
  min: number;
  median: number;
  max: number;
}

/** Figures that carry a spread across repetitions. */
export type SpreadFigure = 'peakMemoryBytes' | 'oomKills' | 'restarts' | 'okRps' | 'rejectedRps' | 'errorRps' | 'deadlineExceededRps';

/** One death of the agent: when, in which phase, and why. */
export interface DeathRecord {
  /** Repetition, counting from 1. */
  rep: number;
  /** ms since that repetition's load start (negative before it). */
  atMs: number;
  phase: Phase;
  cause: 'oom-kill' | 'emulated-oom' | 'fault-kill' | 'signal' | 'exit';
  detail: string;
  /** Whether it counts for oomKills (a kill outside the load phase counts unless the scenario says otherwise). */
  counted: boolean;
}

/**
 * One fault of the schedule as it happened in one repetition (times in ms since the calls started).
 * The fault scheduler records all but `rep`, which the runner adds.
 */
export interface FaultRecord {
  rep: number;
  action: string;
  atMs: number;
  /** null for instantaneous actions (agent-kill, pod-churn). */
  forMs: number | null;
  /** null when the load ended (or was interrupted) before the fault's time. */
  startedAtMs: number | null;
  endedAtMs: number | null;
  /** What was done, from the start and end events. */
  detail: string;
  /** Set when the fault could not be applied (the agent was down, a write was refused ...). */
  error?: string;
  /** Measured from the fault's end (instantaneous faults: from the action; a kill: the death). */
  recovery: {
    /** ms until the agent answered a real call again; null when it did not before the load ended. */
    agentReadyMs: number | null;
    /**
     * ms until bystanders succeeded again, from whole seconds: 0 when every call of the second
     * holding the end succeeded; that second's end when it had successes and the agent answered
     * within it; else the end of the first later second with a success (upper bounds, 1 s
     * resolution). null without bystanders or without a success before the load ended.
     */
    bystanderOkMs: number | null;
    /** Bystander calls that failed from the fault's start until bystanders succeeded again; null without bystanders. */
    callsLost: number | null;
  };
}

/** What the generator offered and what reached the agent: a starved storm shows here. */
export interface StormRecord {
  /** pods × workersPerPod as the scenario asked, plus the `workers` of each burst fault. */
  offeredWorkers: number;
  /** Worker processes that really started (replacement pods and bursts' pods included), median across repetitions. */
  startedWorkers: number;
  /** Calls the workers started per second of the load phase (closed loop: as fast as they could). */
  offeredRps: number;
  /** Calls the agent answered per second (any status but deadline exceeded). */
  deliveredRps: number;
  /** CPU seconds the workers spent per second of load, divided by the machine's cores (1 = every core busy). */
  generatorCpuShare: number | null;
  /** Busy cores of the whole machine over the load phase (every process, from /proc/stat); null: unreadable. */
  machineBusyCores?: number | null;
  /** The agent's CPU over the load phase, in cores (its cgroup's or process's CPU time per second). */
  agentCpuCores?: number | null;
  /** The machine's 1-minute load average at the end of the load phase. */
  loadAverage?: number | null;
  /** The generator's pod processes and workers over the load phase, in cores (each second's: LoadSample.cpu). */
  generatorCpuCores?: number | null;
  /** The runner process over the load phase, in cores. */
  runnerCpuCores?: number | null;
  /**
   * Who was at a CPU limit and so held the storm back, with the numbers; absent when nobody was
   * (the storm's shape set its rate) or the figures are missing. `generator`: the harness's
   * processes took what CPU they could while the agent had some to spare.
   */
  limitedBy?: { by: 'generator' | 'agent' | 'machine'; detail: string };
  /** Storm workers that crashed (died without reporting), all repetitions: counted, never restarted. */
  workerCrashes?: number;
  /** Set when fewer workers started than offered (the storm shrank), with the numbers. */
  shrank?: string;
  /**
   * Calls (storm and bystanders, all repetitions) whose data reached the generator after their
   * second was emitted: the per-second series counts them in a later second (totals are exact).
   */
  lateCalls?: number;
  /** Set when late calls exceed 1% of all calls, with the numbers: the rate series is bunched. */
  late?: string;
}

/** The kubelet emulator's GET /pods answer as the storm met it. */
export interface PodListRecord {
  /** Items of the list: running pods (the run's own and the node's others) and terminated ones. */
  items: number;
  runningPods: number;
  /** Ended pods still listed (not yet garbage-collected). */
  terminatedPods: number;
  /** Containers of each of the node's other pods when the scenario fixed it; null: each app's own. */
  containersPerPod: number | null;
  /** Body size in bytes when the calls started, median across repetitions. */
  bytes: number;
  /** Largest body the emulator built in any repetition (new storm pods grow the list). */
  maxBytes: number;
}

export interface AgentPeaks {
  openConnections: number | null;
  /** The Go runtime's goroutines (SPIRE); null for agents that do not report them. */
  goroutines: number | null;
}

/** One repetition's memory pressure short of a kill, over the seconds its storm's calls ran. */
export interface MemoryPressureRecord {
  rep: number;
  /** Seconds the storm ran (the window every figure below covers). */
  stormSeconds: number;
  /** Seconds the working set (usage where unread) stood at >= 95% of the limit in force, and the longest such stretch. */
  nearLimitSeconds: number;
  longestNearLimitSeconds: number;
  /** Charges that met the limit over the storm (v1 memory.failcnt, v2 memory.events max deltas); null where unread. */
  limitHits: number | null;
  /** PSI (v2 memory.pressure): share of the storm's time some / all of the agent's tasks stalled on memory; null on v1. */
  stallSome: number | null;
  stallFull: number | null;
}

/** VariantResult.callCauses: what the storm's calls ended in, and what the agent said when they failed. */
export interface CallCausesRecord {
  /** The storm's calls by gRPC status name at the client (OK included), summed over repetitions. */
  byCode: Record<string, number>;
  /**
   * The agent log's most frequent failure lines over the repetitions, most frequent first (at most
   * 3), with numbers, ports and pids masked so that one cause is one line. Counts are of logged
   * lines: an agent that throttles its log (the reference agent writes at most 10 a second) logs
   * fewer than it failed.
   */
  agentLog: { line: string; count: number }[];
}

/** VariantResult.bystanders: the service level the innocent pods got over the whole load phase. */
export interface BystanderSummary {
  calls: number;
  ok: number;
  /** ok / calls; 0 when no call completed. */
  successRatio: number;
  /** Latency of successful calls (merged HDR histograms); null when none succeeded. */
  p50Ms: number | null;
  p99Ms: number | null;
  /** The longest time any one bystander worker went without a successful call (worker-side completion times). */
  longestGapMs: number;
  /** Calls per gRPC status code name. */
  byStatus: Record<string, number>;
}

export interface VariantResult {
  /** The variant's name as written in the scenario (placements shorthand: the placement's name). */
  name: string;
  agent: VariantAgentRecord;
  /** Per repetition folder names, e.g. ["ref-pre.r1"]. */
  runDirs: string[];
  memoryLimitBytes: number;
  /**
   * The peak of the agent's memory in `memoryMeasure` (the scenario's; working set by default),
   * over every agent start up to and including its death; median across repetitions
   * (spread.peakMemoryBytes has min and max). null: unmeasured — no repetition could read the
   * agent's memory in that measure (a cluster without a working memory sampler); never 0 for that.
   */
  peakMemoryBytes: number | null;
  /** The measure peakMemoryBytes, its spread, ratios and expectations are in. Folders of schemaVersion 2 and older: usage. */
  memoryMeasure: MemoryMeasure;
  /**
   * The peak of every measure, median across repetitions: working set (the highest 100 ms reading;
   * an OOM-killed repetition's is its usage at the kill), usage (the kernel's high-water mark:
   * v1 memory.max_usage_in_bytes, v2 memory.peak; VmHWM when emulated), RSS (the highest reading).
   */
  peaks: MemoryPeaks;
  /** Counted OOM kills, summed over repetitions. */
  oomKills: number;
  /** Restarts performed (the agent was started again), summed over repetitions. */
  restarts: number;
  downtimeSeconds: number;
  /** Rates: median across repetitions of calls per second of the load phase. */
  okRps: number;
  rejectedRps: number;
  errorRps: number;
  deadlineExceededRps: number;
  spread: Partial<Record<SpreadFigure, Range>>;
  deaths: DeathRecord[];
  /** Latency per outcome over the whole load phase (merged HDR histograms). */
  latency: Partial<Record<Outcome, LatencySummary>>;
  /** Highest in-flight attestation gauge seen by a 1 Hz metrics scrape (a lower bound; null without metrics). */
  peakInflightAttestations: number | null;
  /** The agent's highest open Workload API connections and goroutines in a 1 Hz metrics scrape over the load phase (lower bounds; absent without metrics). */
  agentPeaks?: AgentPeaks;
  /** Kubelet /pods requests per second the emulator served while the calls ran (median over repetitions; absent in older run folders). */
  kubeletRequestsPerSecond?: number;
  /**
   * Rate-limit rejections by limiter key type, summed over repetitions. The total comes from the load
   * generator's own per-call outcomes (storm and bystanders), which survive the agent's death; the key
   * types come from the agent's metrics scrapes, and rejections no scrape saw (made after the last
   * scrape before the agent died or was stopped, or by an agent without metrics) are under `unattributed`.
   */
  rejectionsByKeyType: Record<string, number>;
  /** Real memory of one load worker (PSS), median over workers; null if not measured. */
  workerMemoryBytes: number | null;
  /** The workers' client, asked for and run (absent in older run folders, and when no worker reported it). */
  loadClient?: LoadClientRecord;
  /** The scenario's faults as they happened, per repetition, with recovery figures (absent without faults). */
  faults?: FaultRecord[];
  /** Offered against delivered load (absent in older run folders). */
  storm?: StormRecord;
  /** The bystander pods' service level over the load phase, all repetitions merged; absent without load.bystanders. */
  bystanders?: BystanderSummary;
  /** The /pods answer the agent parsed (absent for external agents and in older run folders). */
  podList?: PodListRecord;
  /** What held a SPIRE agent's live heap, per repetition that saved heap profiles (agent.heapProfiles); absent otherwise. */
  spireHeap?: SpireHeapRecord[];
  /** Where a SPIRE agent's goroutines waited, per repetition that saved goroutine profiles (agent.goroutineProfiles); absent otherwise. */
  spireGoroutines?: SpireGoroutineRecord[];
  /** Each repetition's own figures (absent in older folders: the reports read them from the samples). */
  repetitionFigures?: RepetitionFigures[];
  /** The kubelet emulator's /pods requests while the calls ran, over the repetitions (absent for agents that ask no emulator, and in older folders). */
  kubeletFetches?: KubeletFetchRecord;
  /** scenario.cluster.topology three-node: per repetition, the storm's node, the quiet node and the server side by side. */
  cluster?: ClusterNodesRecord[];
  /** Per repetition, the time near the limit, its hits and memory stalls (absent in older folders and without memory samples). */
  memoryPressure?: MemoryPressureRecord[];
  /**
   * Set when the agent survived but a repetition spent a meaningful share of its storm at its limit
   * (>= 20% of the storm's seconds at >= 95%, or PSI full >= 10%): the words the verdict uses.
   */
  atLimit?: string;
  /** The storm's calls by status and the agent's failure lines (absent in older folders). */
  callCauses?: CallCausesRecord;
  expectations: ExpectationResult[];
  /** failed if any expectation failed; inconclusive if none failed and one was inconclusive. */
  verdict: Verdict;
  /** True when no expectation failed (and the variant ran). */
  passed: boolean;
  /** Set when the variant could not be run; the message says why. */
  error?: string;
  /** Set when no repetition could be judged because the machine could not start the storm in time (verdict inconclusive). */
  notJudged?: string;
}
