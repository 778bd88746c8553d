// The memory chart: each variant's agent memory against its limit, with the limits, OOM kills and
// faults drawn over it, on a scale that keeps a collapsing agent's peak in view.
import type { ChartConfiguration } from 'chart.js';
import { MEASURE_WORDS } from '../contract/index.js';
import type { ReportData, Point } from './report-model.js';
import { roundUp } from './chart-axis.js';
import { lineDataset, offScaleDataset, timeOptions, withPointLegend, type ChartSpec, type ColorOf } from './chart-kit.js';

/**
 * The memory axis: fitted to what was measured (every sample, OOM kill and baseline peak), so the
 * curves fill the chart. A limit close above the data (up to LIMIT_REACH times the top) widens the
 * axis to show its line; one further up would squeeze every curve into the bottom of the chart, so it
 * stays off the scale and is marked at the top edge instead.
 */
const LIMIT_REACH = 1.4;

interface MemoryScale {
  /** The y-axis maximum in MiB: a round number just above the fitted values. */
  max: number;
  /** Limits drawn as lines (within the axis) and limits marked at the top edge (above it). */
  inRange: ReportData['series']['limits'];
  above: ReportData['series']['limits'];
}

function memoryScale(series: ReportData['series']): MemoryScale {
  const measured = Math.max(
    1,
    ...series.memory.flatMap((m) => m.points.map((p) => p.y ?? 0)),
    ...series.memoryUsage.flatMap((m) => m.points.map((p) => p.y ?? 0)),
    ...series.oomKills.flatMap((k) => k.points.map((p) => p.y ?? 0)),
    ...series.baselinePeaks.map((b) => b.mib),
  );
  const inRange = series.limits.filter((l) => l.mib <= LIMIT_REACH * measured);
  const above = series.limits.filter((l) => l.mib > LIMIT_REACH * measured);
  return { max: roundUp(1.05 * Math.max(measured, ...inRange.map((l) => l.mib))), inRange, above };
}

/** The memory chart's reference lines: limits, baseline peaks, fault windows and phase marks. */
function memoryOverlays(series: ReportData['series'], colorOf: ColorOf, scale: MemoryScale): unknown[] {
  const range = series.xRange;
  if (!range) return [];
  const datasets: unknown[] = [];
  for (const limit of scale.inRange) {
    datasets.push({
      label: limit.label,
      data: [
        { x: range.min, y: limit.mib },
        { x: range.max, y: limit.mib },
      ],
      borderColor: '#D00000',
      backgroundColor: '#D00000',
      borderWidth: 2,
      borderDash: [10, 6],
      pointRadius: 0,
      pointStyle: 'dash',
    });
  }
  // A limit above the axis: an arrow at the top edge, left where the curves are still low, named in
  // the legend and labelled with the limit.
  for (const limit of scale.above) {
    datasets.push(
      offScaleDataset({
        label: `${limit.label} ↑ (above the axis)`,
        color: '#D00000',
        top: scale.max,
        points: [{ x: range.min, value: limit.mib, text: limit.label.replace(/^limit /, '') }],
      }),
    );
  }
  for (const b of series.baselinePeaks) {
    datasets.push({
      label: b.label,
      data: [
        { x: range.min, y: b.mib },
        { x: range.max, y: b.mib },
      ],
      borderColor: colorOf(b.variant),
      backgroundColor: colorOf(b.variant),
      borderWidth: 1.5,
      borderDash: [2, 6],
      pointRadius: 0,
      pointStyle: 'line',
    });
  }
  // Fault windows at the bottom of the chart, one short bar each (instant faults: a point).
  if (series.faultWindows.length) {
    const data: Point[] = [];
    for (const f of series.faultWindows)
      data.push({ x: f.from, y: 0 }, { x: Math.max(f.to, f.from + 0.2), y: 0 }, { x: Math.max(f.to, f.from + 0.2), y: null });
    datasets.push({
      label: `faults (${series.faultWindows.map((f) => f.action).join(', ')})`,
      data,
      borderColor: '#7B2CBF',
      backgroundColor: '#7B2CBF',
      borderWidth: 8,
      pointRadius: 0,
      pointStyle: 'rect',
      spanGaps: false,
    });
  }
  // Phase boundaries: the calls start at x = 0; the load ends at loadEnd (drain, then the agent stops).
  const marks: Array<[string, number]> = [['calls start (pods up)', 0]];
  if (series.loadEnd !== null) marks.push(['load ends (drain, agent stopped)', series.loadEnd]);
  for (const [label, x] of marks) {
    if (x < range.min || x > range.max) continue;
    datasets.push({
      label,
      data: [
        { x, y: 0 },
        { x, y: scale.max },
      ],
      borderColor: '#777777',
      backgroundColor: '#777777',
      borderWidth: 1,
      borderDash: [2, 3],
      pointRadius: 0,
      pointStyle: 'line',
    });
  }
  return datasets;
}

/** Agent memory over time, with the limits, OOM kills and phase marks, on an axis fitted to the data. */
export function memoryChart(series: ReportData['series'], colorOf: ColorOf): ChartSpec | null {
  if (series.memory.length === 0) return null;
  const scale = memoryScale(series);
  const datasets: unknown[] = series.memory.map((s) => lineDataset(colorOf, s));
  // Usage beside the working set: thin and dotted in the variant's colour, so the gap between them
  // (page cache the kernel would reclaim) shows without competing with the measure itself.
  datasets.push(...series.memoryUsage.map((s) => lineDataset(colorOf, s, { borderWidth: 1, borderDash: [2, 3] })));
  datasets.push(...memoryOverlays(series, colorOf, scale));
  for (const s of series.oomKills) {
    datasets.push({
      type: 'scatter',
      label: `OOM kill · ${s.label}`,
      data: s.points,
      borderColor: '#D00000',
      backgroundColor: colorOf(s.variant),
      pointStyle: 'crossRot',
      pointRadius: 10,
      pointHoverRadius: 12,
      borderWidth: 3,
      showLine: false,
    });
  }
  const words = MEASURE_WORDS[series.memoryMeasure];
  const options = withPointLegend(timeOptions(`Agent memory (${words}) over time`, `agent ${words} (MiB)`, series.xRange));
  const y = { ...options.scales.y, min: 0, max: scale.max };
  const above = scale.above.map((l) => l.label.replace(/^limit /, '')).join(', ');
  const plugins = {
    ...options.plugins,
    ...(above ? { subtitle: { display: true, text: `Axis fitted to the measured memory; the limit of ${above} is above it (▲ at the top edge).` } } : {}),
  };
  return {
    id: 'memory',
    time: true,
    title: `Agent memory (${words}) over time`,
    unit: 'MiB',
    description: `Agent memory per variant as its ${words}${series.memoryMeasure === 'working-set' ? ' (cgroup usage minus inactive file pages, as kubectl top counts it; RSS when emulated)' : ''}${series.memoryUsage.length ? ', with cgroup usage as a thin dotted line' : ''}, with the memory limit and OOM kills (×)${above ? `; the axis is fitted to the measured memory, and the limit of ${above}, far above it, is marked ▲ at the top edge` : ''}. x = 0 is when the calls started (pods up): negative x is pod start-up and warm-up${series.loadEnd !== null ? `; after ${series.loadEnd.toFixed(0)} s the load drains and the agent is stopped` : ''}.`,
    config: { type: 'line', data: { datasets }, options: { ...options, plugins, scales: { ...options.scales, y } } } as ChartConfiguration,
  };
}
