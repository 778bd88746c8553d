// sweep.json: one point per value × variant, and where each variant first died. Written after every
// point, so an interrupted sweep keeps what it finished.
import type { MemoryMeasure, RunResults } from '../contract/index.js';

export const SWEEP_SCHEMA_VERSION = 1;

export interface SweepPoint {
  value: string;
  /** The value as a number (bytes for sizes, ms for durations) for ordering and charts; null if not numeric. */
  numeric: number | null;
  variant: string;
  /** In memoryMeasure; null: unmeasured (a sweep point run where nothing could read the agent's memory). */
  peakMemoryBytes: number | null;
  /** The measure of the peaks (the scenario's; working set unless set). Absent in older sweep.json files: usage. */
  memoryMeasure?: MemoryMeasure;
  peakMinBytes: number | null;
  peakMaxBytes: number | null;
  memoryLimitBytes: number;
  oomKills: number;
  restarts: number;
  okRps: number;
  rejectedRps: number;
  /** Bystanders' success ratio when the scenario has bystanders. */
  bystanderSuccess: number | null;
  verdict: RunResults['verdict'];
  /** The run folder of this value, relative to the sweep folder. */
  runDir: string;
  error?: string;
}

export interface SweepResult {
  schemaVersion: typeof SWEEP_SCHEMA_VERSION;
  scenario: string;
  key: string;
  values: string[];
  /** "grid" for --vary, "bisect" for --find-oom. */
  mode: 'grid' | 'bisect';
  status: 'running' | 'complete' | 'interrupted';
  startedAt: string;
  endedAt: string | null;
  points: SweepPoint[];
  /**
   * Per variant: the value at which its OOM outcome changes — the smallest value (in sweep order)
   * at which it was OOM-killed; null when it never was.
   */
  boundaries: Record<string, string | null>;
  /** Per variant: the largest value at which it was OOM-killed (for limits: the next value up is what it needs). */
  lastKilled: Record<string, string | null>;
}

/** Points of one finished run. */
export function pointsOf(value: string, numeric: number | null, runDir: string, results: RunResults): SweepPoint[] {
  return results.variants.map((v) => {
    const by = (v as unknown as { bystanders?: { successRatio?: number; calls?: number } }).bystanders;
    return {
      value,
      numeric,
      variant: v.name,
      peakMemoryBytes: v.peakMemoryBytes,
      memoryMeasure: v.memoryMeasure,
      peakMinBytes: v.spread.peakMemoryBytes?.min ?? v.peakMemoryBytes,
      peakMaxBytes: v.spread.peakMemoryBytes?.max ?? v.peakMemoryBytes,
      memoryLimitBytes: v.memoryLimitBytes,
      oomKills: v.oomKills,
      restarts: v.restarts,
      okRps: v.okRps,
      rejectedRps: v.rejectedRps,
      bystanderSuccess: by && (by.calls ?? 0) > 0 ? (by.successRatio ?? null) : null,
      verdict: v.verdict,
      runDir,
      ...(v.error ? { error: v.error } : {}),
    };
  });
}

/** The values in sweep order: numeric order when every value is numeric, else as given. */
export function sweepOrder(values: string[], numeric: (v: string) => number | null): string[] {
  const nums = values.map(numeric);
  if (nums.every((n) => n !== null)) return [...values].sort((a, b) => numeric(a)! - numeric(b)!);
  return values;
}

/** Per variant, the first and the last value (in sweep order) at which it was OOM-killed. */
export function boundaries(points: SweepPoint[], order: string[]): { first: Record<string, string | null>; last: Record<string, string | null> } {
  const first: Record<string, string | null> = {};
  const last: Record<string, string | null> = {};
  for (const variant of new Set(points.map((p) => p.variant))) {
    const killed = points.filter((p) => p.variant === variant && p.oomKills > 0 && !p.error).map((p) => p.value);
    first[variant] = order.find((v) => killed.includes(v)) ?? null;
    last[variant] = [...order].reverse().find((v) => killed.includes(v)) ?? null;
  }
  return { first, last };
}
