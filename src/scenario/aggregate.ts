// Folding repetitions of one placement into its PlacementResult: the worst peak, summed OOM kills,
// restarts and downtime, mean rates, and latency from histograms merged across repetitions.
import type { LatencySummary, Outcome, PlacementName, PlacementResult } from './results.js';

/** What one repetition of one placement measured. */
export interface RepMeasurement {
  runDir: string;
  memoryLimitBytes: number;
  peakMemoryBytes: number;
  oomKills: number;
  restarts: number;
  downtimeSeconds: number;
  /** Length of the load phase actually run, in seconds. */
  loadSeconds: number;
  counts: Record<Outcome, number>;
  /** Whole-run encoded HDR histograms per outcome. */
  histograms: Partial<Record<Outcome, string>>;
  peakInflightAttestations: number | null;
  rejectionsByKeyType: Record<string, number>;
  workerMemoryBytes: number | null;
  error?: string;
}

/** Merges encoded histograms and summarizes them (the load generator's HDR functions). */
export type LatencySummarizer = (encoded: string[]) => LatencySummary | null;

const OUTCOMES: Outcome[] = ['ok', 'rateLimited', 'deadlineExceeded', 'error'];

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
const round = (n: number, d = 3) => Math.round(n * 10 ** d) / 10 ** d;

export function aggregatePlacement(name: PlacementName, reps: RepMeasurement[], summarize: LatencySummarizer): PlacementResult {
  const measured = reps.filter((r) => r.loadSeconds > 0);
  const rate = (o: Outcome) => round(mean(measured.map((r) => r.counts[o] / r.loadSeconds)));
  const latency: Partial<Record<Outcome, LatencySummary>> = {};
  for (const o of OUTCOMES) {
    const encoded = reps.map((r) => r.histograms[o]).filter((h): h is string => !!h);
    if (!encoded.length) continue;
    const s = summarize(encoded);
    if (s && s.count > 0) latency[o] = s;
  }
  const rejections: Record<string, number> = {};
  for (const r of reps) for (const [k, v] of Object.entries(r.rejectionsByKeyType)) rejections[k] = (rejections[k] ?? 0) + v;
  const inflight = reps.map((r) => r.peakInflightAttestations).filter((v): v is number => v !== null);
  const workers = reps.map((r) => r.workerMemoryBytes).filter((v): v is number => v !== null);
  const errors = reps.filter((r) => r.error).map((r) => r.error!);
  const result: PlacementResult = {
    name,
    runDirs: reps.map((r) => r.runDir),
    memoryLimitBytes: Math.max(0, ...reps.map((r) => r.memoryLimitBytes)),
    peakMemoryBytes: Math.max(0, ...reps.map((r) => r.peakMemoryBytes)),
    oomKills: reps.reduce((a, r) => a + r.oomKills, 0),
    restarts: reps.reduce((a, r) => a + r.restarts, 0),
    downtimeSeconds: round(reps.reduce((a, r) => a + r.downtimeSeconds, 0), 1),
    okRps: rate('ok'),
    rejectedRps: rate('rateLimited'),
    errorRps: rate('error'),
    deadlineExceededRps: rate('deadlineExceeded'),
    latency,
    peakInflightAttestations: inflight.length ? Math.max(...inflight) : null,
    rejectionsByKeyType: rejections,
    // Median across repetitions of each repetition's median worker.
    workerMemoryBytes: workers.length ? [...workers].sort((a, b) => a - b)[Math.floor(workers.length / 2)]! : null,
    expectations: [],
    passed: false,
  };
  // A placement with no measured repetition failed to run; partial failures are noted but the data kept.
  if (errors.length && measured.length === 0) result.error = errors.join('; ');
  else if (errors.length) result.error = `${errors.length} of ${reps.length} repetition(s) failed: ${errors.join('; ')}`;
  return result;
}
