// Comparison across run folders: the first is the baseline (e.g. before a limiter change), and each
// later run gets one row per variant with what moved — peak memory, OOM kills, ok calls/s, p99.
import type { Delta, DeltaRow, RunReport, TableRow } from './report-model.js';

export function deriveComparison(runs: RunReport[]): DeltaRow[] {
  const [baseline, ...others] = runs;
  if (!baseline) return [];
  const rows: DeltaRow[] = [];
  for (const run of others) {
    const variants = [...new Set([...baseline.rows, ...run.rows].map((r) => r.variant))];
    for (const variant of variants) {
      const a = baseline.rows.find((r) => r.variant === variant && r.error === null);
      const b = run.rows.find((r) => r.variant === variant && r.error === null);
      const pick = (f: (r: TableRow) => number | null) => delta(a ? f(a) : null, b ? f(b) : null);
      rows.push({
        baselineRun: baseline.label,
        run: run.label,
        variant,
        peakMemoryMiB: pick((r) => r.peakMemoryMiB),
        oomKills: pick((r) => r.oomKills),
        okRps: pick((r) => r.okRps),
        okP99Ms: pick((r) => r.okP99Ms),
      });
    }
  }
  return rows;
}

export function delta(baseline: number | null, value: number | null): Delta {
  if (baseline === null || value === null) return { baseline, value, delta: null, percent: null };
  return {
    baseline,
    value,
    delta: value - baseline,
    percent: baseline === 0 ? null : (100 * (value - baseline)) / Math.abs(baseline),
  };
}
