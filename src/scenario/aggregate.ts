// Folding repetitions of one variant into its VariantResult: median figures with min–max spreads,
// summed OOM kills, restarts and downtime, every death with its phase, and latency from histograms
// merged across repetitions.
import { mergeBystanderRuns, type BystanderRun } from '../load/index.js';
import { stormLimit } from '../sample/index.js';
import { DEFAULT_MEMORY_MEASURE, peakIn, peaksAtOomKill, type MemoryMeasure, type MemoryPeaks } from '../contract/index.js';
import type {
  AgentPeaks,
  ClusterNodesRecord,
  DeathRecord,
  FaultRecord,
  KubeletFetchFigures,
  LatencySummary,
  LoadClientRecord,
  Outcome,
  PodListRecord,
  Range,
  SpreadFigure,
  StormRecord,
  VariantAgentRecord,
  VariantResult,
} from '../contract/index.js';

/** What one repetition of one variant measured. */
export interface RepMeasurement {
  runDir: string;
  memoryLimitBytes: number;
  /**
   * The repetition's peak in every measure: usage the kernel's high-water mark (peakSource says
   * where it came from), working set and RSS the highest samples; null where nothing could read it.
   */
  peaks: MemoryPeaks;
  peakSource?: 'kernel' | 'samples' | 'unmeasured';
  oomKills: number;
  restarts: number;
  downtimeSeconds: number;
  /** Length of the load phase actually run, in seconds. */
  loadSeconds: number;
  /** When the calls started, ms on the timeline (absent: at its origin, as in a cluster). */
  callsAtMs?: number;
  counts: Record<Outcome, number>;
  /** Whole-run encoded HDR histograms per outcome. */
  histograms: Partial<Record<Outcome, string>>;
  peakInflightAttestations: number | null;
  /** The agent's own figures at their highest over the load phase, from its metrics scrapes (absent: none scraped). */
  agentPeaks?: AgentPeaks;
  /** Kubelet /pods requests the emulator served while the calls ran, and over how many seconds. */
  kubelet?: { requests: number; seconds: number };
  /** The /pods requests that arrived while the calls ran, as the emulator's request log saw them. */
  kubeletFetches?: KubeletFetchFigures;
  rejectionsByKeyType: Record<string, number>;
  workerMemoryBytes: number | null;
  /** Calls started, workers started, worker CPU seconds, crashed workers (absent when the load did not run). */
  generator?: {
    calls: number;
    workersStarted: number;
    workerCpuSeconds: number;
    offeredWorkers: number;
    cores: number;
    lateCalls: number;
    maxLateSeconds: number;
    workerCrashes?: number;
  };
  /** The workers' client as asked for and as it ran, and why they differ (absent when no worker reported). */
  loadClient?: LoadClientRecord;
  /** The bystander pods' run (load.bystanders). */
  bystanders?: BystanderRun;
  /** The kubelet's /pods answer when the calls started (bytes) and its largest size over the repetition (maxBytes). */
  podList?: PodListRecord;
  /** A three-node cluster run: the storm's node, the quiet node and the server side by side. */
  cluster?: ClusterNodesRecord;
  /**
   * The machine over the load phase: busy cores (all processes, from /proc/stat), the agent's
   * CPU in cores, and the 1-minute load average at the load's end. null fields: unreadable.
   */
  machine?: {
    busyCores: number | null;
    agentCpuCores: number | null;
    loadAverage: number;
    /** The generator's pod processes and workers, and the runner, in cores (absent: not measured). */
    generatorCores?: number | null;
    runnerCores?: number | null;
    /** CPUs the agent had to itself (isolation); null: it shared them all. */
    agentCpus?: number | null;
  };
  deaths: DeathRecord[];
  faults?: FaultRecord[];
  samplerErrors?: Record<string, { count: number; first: string }>;
  error?: string;
  /** Set instead of error when the machine could not start the storm in time: nothing to judge, nothing failed. */
  notJudged?: string;
}

/** Merges encoded histograms and summarizes them (the load generator's HDR functions). */
export type LatencySummarizer = (encoded: string[]) => LatencySummary | null;

const OUTCOMES: Outcome[] = ['ok', 'rateLimited', 'deadlineExceeded', 'error'];
const round = (n: number, d = 3) => Math.round(n * 10 ** d) / 10 ** d;

/** The median as used everywhere in attestorm: the middle value, or the mean of the two middle ones. */
export function median(xs: readonly number[]): number {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function range(xs: readonly number[]): Range | null {
  if (!xs.length) return null;
  return { min: Math.min(...xs), median: median(xs), max: Math.max(...xs) };
}

/** A repetition's peaks as judged: an OOM-killed one's working set is its usage at the kill. */
function repPeaks(r: RepMeasurement): MemoryPeaks {
  return r.oomKills > 0 ? peaksAtOomKill(r.peaks) : r.peaks;
}

/**
 * What the working set held at its highest reading, in the repetition whose highest working-set
 * reading is nearest the median of theirs (parts of different repetitions do not add up).
 */
function medianParts(reps: RepMeasurement[]): Pick<MemoryPeaks, 'workingSetParts'> {
  const withParts = reps.filter((r) => r.peaks.workingSetParts);
  if (!withParts.length) return {};
  const mid = median(withParts.map((r) => r.peaks.workingSetParts!.workingSetBytes));
  const nearest = withParts.reduce((a, b) =>
    Math.abs(b.peaks.workingSetParts!.workingSetBytes - mid) < Math.abs(a.peaks.workingSetParts!.workingSetBytes - mid) ? b : a,
  );
  return { workingSetParts: { ...nearest.peaks.workingSetParts!, runDir: nearest.runDir } };
}

export function aggregateVariant(
  name: string,
  agent: VariantAgentRecord,
  reps: RepMeasurement[],
  summarize: LatencySummarizer,
  measure: MemoryMeasure = DEFAULT_MEMORY_MEASURE,
): VariantResult {
  const measured = reps.filter((r) => !r.error && r.loadSeconds > 0);
  const spread: Partial<Record<SpreadFigure, Range>> = {};
  const put = (figure: SpreadFigure, xs: number[]) => {
    const r = range(xs);
    if (r) spread[figure] = { min: round(r.min), median: round(r.median), max: round(r.max) };
  };
  // Peaks and deaths count for every repetition that started an agent, even one cut short.
  const started = reps.filter((r) => (r.peaks.usageBytes ?? 0) > 0 || (r.peaks.workingSetBytes ?? 0) > 0 || r.oomKills > 0);
  // Only measured peaks: an unmeasured one (null) is left out, and none measured leaves the figure null.
  const peaksOf = (m: MemoryMeasure) => started.flatMap((r) => [peakIn(repPeaks(r), m)].filter((x): x is number => x !== null));
  put('peakMemoryBytes', peaksOf(measure));
  const medianPeak = (m: MemoryMeasure) => {
    const xs = peaksOf(m);
    return xs.length ? round(median(xs)) : null;
  };
  put(
    'oomKills',
    started.map((r) => r.oomKills),
  );
  put(
    'restarts',
    started.map((r) => r.restarts),
  );
  const rates: Array<[SpreadFigure, Outcome]> = [
    ['okRps', 'ok'],
    ['rejectedRps', 'rateLimited'],
    ['errorRps', 'error'],
    ['deadlineExceededRps', 'deadlineExceeded'],
  ];
  for (const [fig, o] of rates)
    put(
      fig,
      measured.map((r) => r.counts[o] / r.loadSeconds),
    );

  const latency: Partial<Record<Outcome, LatencySummary>> = {};
  for (const o of OUTCOMES) {
    const encoded = measured.map((r) => r.histograms[o]).filter((h): h is string => !!h);
    if (!encoded.length) continue;
    const s = summarize(encoded);
    if (s && s.count > 0) latency[o] = s;
  }
  const rejections: Record<string, number> = {};
  for (const r of reps) for (const [k, v] of Object.entries(r.rejectionsByKeyType)) rejections[k] = (rejections[k] ?? 0) + v;
  const inflight = reps.map((r) => r.peakInflightAttestations).filter((v): v is number => v !== null);
  const workers = reps.map((r) => r.workerMemoryBytes).filter((v): v is number => v !== null);
  const errors = reps.filter((r) => r.error).map((r) => r.error!);
  const unjudged = reps.filter((r) => r.notJudged).map((r) => r.notJudged!);
  const deaths = reps.flatMap((r) => r.deaths);
  const result: VariantResult = {
    name,
    agent,
    runDirs: reps.map((r) => r.runDir),
    memoryLimitBytes: Math.max(0, ...reps.map((r) => r.memoryLimitBytes)),
    // null when no repetition measured it (unmeasured), never a 0 standing in for it.
    peakMemoryBytes: spread.peakMemoryBytes?.median ?? null,
    memoryMeasure: measure,
    peaks: {
      workingSetBytes: medianPeak('working-set'),
      usageBytes: medianPeak('usage'),
      rssBytes: medianPeak('rss'),
      ...medianParts(started),
    },
    // Each repetition counted its own kills from its deaths (phase rules applied there).
    oomKills: reps.reduce((a, r) => a + r.oomKills, 0),
    restarts: reps.reduce((a, r) => a + r.restarts, 0),
    downtimeSeconds: round(
      reps.reduce((a, r) => a + r.downtimeSeconds, 0),
      1,
    ),
    okRps: spread.okRps?.median ?? 0,
    rejectedRps: spread.rejectedRps?.median ?? 0,
    errorRps: spread.errorRps?.median ?? 0,
    deadlineExceededRps: spread.deadlineExceededRps?.median ?? 0,
    spread,
    deaths,
    latency,
    peakInflightAttestations: inflight.length ? Math.max(...inflight) : null,
    ...agentFiguresOf(measured),
    rejectionsByKeyType: rejections,
    workerMemoryBytes: workers.length ? median(workers) : null,
    ...(measured.some((r) => r.bystanders) ? { bystanders: mergeBystanderRuns(measured.flatMap((r) => (r.bystanders ? [r.bystanders] : []))) } : {}),
    expectations: [],
    verdict: 'failed',
    passed: false,
  };
  const faults = reps.flatMap((r) => r.faults ?? []);
  if (faults.length) result.faults = faults;
  // Per repetition, never merged: each says what the storm did to the rest of the cluster that time.
  const cluster = reps.flatMap((r) => (r.cluster ? [r.cluster] : []));
  if (cluster.length) result.cluster = cluster;
  const storm = stormOf(measured);
  if (storm) result.storm = storm;
  const client = loadClientOf(reps);
  if (client) result.loadClient = client;
  const lists = reps.flatMap((r) => (r.podList ? [r.podList] : []));
  if (lists.length) result.podList = { ...lists[0]!, bytes: median(lists.map((l) => l.bytes)), maxBytes: Math.max(...lists.map((l) => l.maxBytes)) };
  // A variant with no measured repetition failed to run; partial failures are noted but the data kept.
  if (errors.length && measured.length === 0) result.error = errors.join('; ');
  else if (errors.length) result.error = `${errors.length} of ${reps.length} repetition(s) failed: ${errors.join('; ')}`;
  else if (unjudged.length && measured.length === 0) result.notJudged = [...new Set(unjudged)].join('; ');
  return result;
}

/** The highest open connections and goroutines of any repetition, and the kubelet's request rate (median). */
function agentFiguresOf(reps: RepMeasurement[]): Pick<VariantResult, 'agentPeaks' | 'kubeletRequestsPerSecond'> {
  const out: Pick<VariantResult, 'agentPeaks' | 'kubeletRequestsPerSecond'> = {};
  const max = (pick: (p: AgentPeaks) => number | null) => {
    const xs = reps.map((r) => (r.agentPeaks ? pick(r.agentPeaks) : null)).filter((v): v is number => v !== null);
    return xs.length ? Math.max(...xs) : null;
  };
  if (reps.some((r) => r.agentPeaks)) out.agentPeaks = { openConnections: max((p) => p.openConnections), goroutines: max((p) => p.goroutines) };
  const rates = reps.flatMap((r) => (r.kubelet && r.kubelet.seconds > 0 ? [r.kubelet.requests / r.kubelet.seconds] : []));
  if (rates.length) out.kubeletRequestsPerSecond = round(median(rates), 2);
  return out;
}

/** The workers' client over the repetitions: one that did not run the client asked for is the one to report. */
function loadClientOf(reps: RepMeasurement[]): LoadClientRecord | null {
  const records = reps.flatMap((r) => (r.loadClient ? [r.loadClient] : []));
  return records.find((c) => c.ran !== c.requested) ?? records[0] ?? null;
}

/** Late calls above this share of all calls get a note: the rate series is visibly bunched. */
const LATE_NOTE_SHARE = 0.01;

/** The machine's figures over the load, medians across repetitions (absent when none recorded them). */
function machineOf(
  reps: RepMeasurement[],
): Pick<StormRecord, 'machineBusyCores' | 'agentCpuCores' | 'loadAverage' | 'generatorCpuCores' | 'runnerCpuCores' | 'limitedBy'> {
  const of = (pick: (m: NonNullable<RepMeasurement['machine']>) => number | null | undefined) => {
    const xs = reps.flatMap((r) => (r.machine && pick(r.machine) != null ? [pick(r.machine)!] : []));
    return xs.length ? round(median(xs), 2) : null;
  };
  if (!reps.some((r) => r.machine)) return {};
  const figures = { machineBusyCores: of((m) => m.busyCores), agentCpuCores: of((m) => m.agentCpuCores), loadAverage: of((m) => m.loadAverage) };
  if (!reps.some((r) => r.machine?.generatorCores != null)) return figures;
  const generatorCpuCores = of((m) => m.generatorCores);
  const runnerCpuCores = of((m) => m.runnerCores);
  const limit = stormLimit({
    generatorCores: generatorCpuCores,
    runnerCores: runnerCpuCores,
    agentCores: figures.agentCpuCores,
    machineBusyCores: figures.machineBusyCores,
    ...(reps[0]!.generator ? { cores: reps[0]!.generator.cores } : {}),
    agentCpus: reps[0]!.machine?.agentCpus ?? null,
  });
  return { ...figures, generatorCpuCores, runnerCpuCores, ...(limit ? { limitedBy: limit } : {}) };
}

/** Offered against delivered load, medians across repetitions; null when no repetition measured it. */
function stormOf(measured: RepMeasurement[]): StormRecord | null {
  const g = measured.filter((r) => r.generator);
  if (!g.length) return null;
  const offeredWorkers = g[0]!.generator!.offeredWorkers;
  const startedWorkers = median(g.map((r) => r.generator!.workersStarted));
  const answered = (r: RepMeasurement) => r.counts.ok + r.counts.rateLimited + r.counts.error;
  const cpu = g.map((r) => r.generator!.workerCpuSeconds / r.loadSeconds / r.generator!.cores).filter((x) => Number.isFinite(x) && x > 0);
  const record: StormRecord = {
    offeredWorkers,
    startedWorkers,
    offeredRps: round(median(g.map((r) => r.generator!.calls / r.loadSeconds))),
    deliveredRps: round(median(g.map((r) => answered(r) / r.loadSeconds))),
    generatorCpuShare: cpu.length ? round(median(cpu)) : null,
    ...machineOf(g),
  };
  // Replacement pods (churn) start extra workers; fewer than offered means the storm shrank.
  if (startedWorkers < offeredWorkers * 0.9) record.shrank = `${startedWorkers} of ${offeredWorkers} offered workers started`;
  // Workers that could not start, or crashed, are the generator's shortfall too.
  const crashes = g.reduce((n, r) => n + (r.generator!.workerCrashes ?? 0), 0);
  if (crashes > 0) record.workerCrashes = crashes;
  const manyCrashed = crashes > 0.1 * offeredWorkers * g.length;
  if (!record.limitedBy && (record.shrank || manyCrashed)) {
    record.limitedBy = {
      by: 'generator',
      detail: [record.shrank, manyCrashed ? `${crashes} workers crashed in ${g.length} repetition(s) (counted, not restarted)` : null]
        .filter(Boolean)
        .join(', '),
    };
  }
  const lateCalls = g.reduce((n, r) => n + r.generator!.lateCalls, 0);
  const calls = g.reduce((n, r) => n + r.generator!.calls + (r.bystanders?.totals.calls ?? 0), 0);
  if (lateCalls > 0) {
    record.lateCalls = lateCalls;
    const maxSeconds = Math.max(...g.map((r) => r.generator!.maxLateSeconds));
    // Totals and rates stay exact; only the per-second series moves the late calls.
    if (lateCalls > LATE_NOTE_SHARE * calls)
      record.late = `${lateCalls} of ${calls} calls (${((100 * lateCalls) / calls).toFixed(1)}%) reached the generator up to ${maxSeconds} s late and are counted in a later second of the rate series`;
  }
  return record;
}
