// Axis tops shared by every renderer (page, PNG, Mermaid): a round number just above the data, and
// for rates an axis one variant's spike cannot take over — the spike is cut at the top edge instead.
import type { Point, SeriesLine } from './report-model.js';

/**
 * A rate axis covers what most seconds of all the lines reach: the ROBUST_QUANTILE of every value
 * plotted, pooled over the lines. Values more than SPIKE_FACTOR times that level are spikes (an
 * agent's post-OOM burst of fast failures runs at thousands per second for a few seconds) and go
 * above the axis; anything up to the factor stays on it, so a line that is merely the highest is
 * never cut. A spike longer than 5% of all the plotted seconds is a level, not a spike, and sets
 * the axis.
 */
export const ROBUST_QUANTILE = 0.95;
export const SPIKE_FACTOR = 2;

/** The next multiple of a 1-2-2.5-5 step that gives about eight ticks: 606 → 700, 134 → 140. */
export function roundUp(value: number): number {
  if (!(value > 0)) return 1;
  const raw = value / 8;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= raw)!;
  return Math.ceil(value / step) * step;
}

/** The value below which a share q of the sorted values fall (linear between neighbours). */
function quantile(sorted: number[], q: number): number {
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (at - lo);
}

export interface RateAxis {
  /** The axis top. */
  max: number;
  /** Whether some value lies above it. */
  clipped: boolean;
}

/** The axis top for rate lines, from every value they plot (see ROBUST_QUANTILE). */
export function rateAxis(values: number[]): RateAxis {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  const top = sorted.at(-1) ?? 0;
  const level = sorted.length > 0 ? quantile(sorted, ROBUST_QUANTILE) : 0;
  if (level <= 0 || top <= SPIKE_FACTOR * level) return { max: roundUp(1.05 * top), clipped: false };
  const kept = sorted.filter((v) => v <= SPIKE_FACTOR * level).at(-1)!;
  const max = roundUp(1.05 * kept);
  return { max, clipped: top > max };
}

/** A line's values above the axis: the highest point of each run of consecutive seconds above it. */
export function spikesAbove(points: Point[], max: number): { x: number; value: number }[] {
  const out: { x: number; value: number }[] = [];
  let run: { x: number; value: number } | null = null;
  for (const p of points) {
    if (p.y !== null && p.y > max) {
      if (run === null || p.y > run.value) run = { x: p.x, value: p.y };
      continue;
    }
    if (run) out.push(run);
    run = null;
  }
  if (run) out.push(run);
  return out;
}

/** Every y a set of lines plots, for rateAxis. */
export function plottedValues(lines: SeriesLine[]): number[] {
  return lines.flatMap((l) => l.points.flatMap((p) => (p.y === null ? [] : [p.y])));
}

/** A spike's value as its label reads: "5,002/s". */
export const perSecondText = (value: number) => `${Math.round(value).toLocaleString('en-US')}/s`;
