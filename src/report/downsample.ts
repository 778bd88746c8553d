// Thins long time series for charts. Memory is sampled every 100 ms; a long run would put tens of
// thousands of points into the HTML. Bucketing keeps each bucket's highest point so that a peak —
// the figure the whole report is about — never disappears from the chart.
import type { Point } from './report-model.js';

export function downsampleMax(points: Point[], maxPoints: number): Point[] {
  if (points.length <= maxPoints || maxPoints < 2) return points;
  const out: Point[] = [points[0]!];
  const inner = points.length - 2;
  const buckets = maxPoints - 2;
  const size = inner / buckets;
  for (let b = 0; b < buckets; b++) {
    const from = 1 + Math.floor(b * size);
    const to = Math.min(1 + Math.floor((b + 1) * size), points.length - 1);
    let best: Point | undefined;
    let gap: Point | undefined;
    for (let i = from; i < to; i++) {
      const p = points[i]!;
      if (p.y === null) gap = p;
      else if (!best || p.y > best.y!) best = p;
    }
    // A gap (agent down) must survive thinning or the line would bridge the outage.
    if (best && gap && gap.x < best.x) out.push(gap, best);
    else if (best && gap) out.push(best, gap);
    else if (best ?? gap) out.push((best ?? gap)!);
  }
  out.push(points[points.length - 1]!);
  return out;
}
