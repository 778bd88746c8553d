// The time charts as Mermaid `xychart-beta` blocks, which GitHub draws in Markdown (summary.md, a job
// summary, a pull-request comment) without hosting an image. From the same derived series as the
// HTML and PNG charts; each line resampled onto one shared grid of at most 60 points, since
// xychart spreads a line's values evenly over the x range. Mermaid draws no legend: the sentence
// under each chart names the lines in order, by colour.
import { perSecondText, rateAxis, roundUp, spikesAbove } from './chart-axis.js';
import type { ChartId } from './chart-kit.js';
import { colorName, variantPalette, type ColorOf } from './chart-kit.js';
import { formatLimit } from './derive-table.js';
import type { Point, ReportData, SeriesLine } from './report-model.js';

/** Points per line: enough for the shape of a storm, few enough for a readable block. */
export const MERMAID_MAX_POINTS = 60;

/** The charts by name: agent memory, calls served per second, calls rejected per second. */
export const MERMAID_CHARTS = ['memory', 'served', 'rejected'] as const;
export type MermaidChart = (typeof MERMAID_CHARTS)[number];

export interface MermaidOptions {
  /** Which charts, in their usual order. Default: all three. */
  charts?: readonly MermaidChart[];
  /** Points per line, at most. Default MERMAID_MAX_POINTS. */
  maxPoints?: number;
}

interface Measure {
  key: MermaidChart;
  id: ChartId;
  title: string;
  yTitle: string;
  lines: SeriesLine[];
  /** How a step's samples become its value: the highest (memory: a peak must not vanish) or their mean (per-second rates). */
  reduce: 'max' | 'mean';
  /** What the value means where the step holds only gaps (the agent down). */
  note: string;
  /** Rates take the rate axis (one variant's spike is cut at the top, as on the page and the PNGs); others fit their highest value. */
  axis: 'fit' | 'rate';
}

/** x of each grid point: `n` points from min to max, evenly spaced, as xychart places a line's values. */
function grid(min: number, max: number, n: number): number[] {
  return Array.from({ length: n }, (_, i) => min + ((max - min) * i) / (n - 1));
}

/**
 * One line's value at each grid point, from its samples within half a step either side: the
 * highest or the mean; 0 where only gaps fall (the agent was down); the previous value where no
 * sample falls inside the line's span, 0 outside it.
 */
export function resample(points: Point[], xs: number[], reduce: 'max' | 'mean'): number[] {
  const half = xs.length > 1 ? (xs[1]! - xs[0]!) / 2 : 0.5;
  const first = points[0]?.x ?? Number.POSITIVE_INFINITY;
  const last = points[points.length - 1]?.x ?? Number.NEGATIVE_INFINITY;
  let prev = 0;
  let j = 0;
  return xs.map((x, i) => {
    const hi = i === xs.length - 1 ? x + half + 1e-9 : x + half;
    while (j < points.length && points[j]!.x < x - half) j++;
    const ys: number[] = [];
    let gaps = 0;
    for (let k = j; k < points.length && points[k]!.x < hi; k++) {
      const y = points[k]!.y;
      if (y === null) gaps++;
      else ys.push(y);
    }
    let value: number;
    if (ys.length > 0) value = reduce === 'max' ? Math.max(...ys) : ys.reduce((a, b) => a + b, 0) / ys.length;
    else if (gaps > 0) value = 0;
    else value = x >= first && x <= last ? prev : 0;
    prev = value;
    return Math.round(value * 10) / 10;
  });
}

/** Mermaid strings are quoted; a quote inside would end them. */
const quoted = (text: string) => `"${text.replace(/"/g, "'")}"`;

function chart(m: Measure, range: { min: number; max: number }, colorOf: ColorOf, repNote: string, maxPoints: number): string[] {
  const span = range.max - range.min;
  const n = Math.max(2, Math.min(maxPoints, Math.floor(span) + 1));
  const xs = grid(range.min, range.max, n);
  let values = m.lines.map((l) => resample(l.points, xs, m.reduce));
  const top = m.axis === 'rate' ? rateAxis(values.flat()).max : roundUp(1.05 * Math.max(0, ...values.flat()));
  // xychart would draw a value above the axis off the chart: cut it at the top, and say so below.
  const cut = m.lines.flatMap((l, i) => {
    const spikes = spikesAbove(
      values[i]!.map((y, k) => ({ x: xs[k]!, y })),
      top,
    );
    return spikes.length === 0 ? [] : [`${l.label} up to ${perSecondText(Math.max(...spikes.map((p) => p.value)))}`];
  });
  values = values.map((v) => v.map((y) => Math.min(y, top)));
  const cutNote = cut.length > 0 ? ` Cut at the top of the axis (a spike would flatten the other lines): ${cut.join(', ')}.` : '';
  const palette = m.lines.map((l) => colorOf(l.variant)).join(', ');
  const step = span / (n - 1);
  const order = m.lines.map((l) => `${l.label} (${colorName(colorOf(l.variant))})`).join(', ');
  return [
    '```mermaid',
    `%%{init: {"themeVariables": {"xyChart": {"plotColorPalette": "${palette}"}}}}%%`,
    'xychart-beta',
    `  title ${quoted(m.title)}`,
    `  x-axis ${quoted('seconds since the calls started')} ${range.min} --> ${range.max}`,
    `  y-axis ${quoted(m.yTitle)} 0 --> ${top}`,
    ...values.map((v) => `  line [${v.join(', ')}]`),
    '```',
    '',
    `Lines, in order: ${order}. ${m.reduce === 'max' ? 'The highest' : 'The mean'} value in each step of ${step.toFixed(step < 10 ? 1 : 0)} s; ${m.note}.${cutNote}${repNote}`,
  ];
}

/**
 * Agent memory and calls per second (served, and rejected where a limiter rejected any) as
 * Mermaid charts with the sentences that name their lines; none without time series.
 */
export function renderMermaidCharts(data: ReportData, opts: MermaidOptions = {}): string[] {
  const wanted = new Set(opts.charts ?? MERMAID_CHARTS);
  const maxPoints = opts.maxPoints ?? MERMAID_MAX_POINTS;
  const { series } = data;
  const range = series.xRange;
  if (!range || range.max <= range.min) return [];
  // The first repetition of each variant: several would be more lines than colours can tell apart.
  const first = (lines: SeriesLine[]) => lines.filter((l) => l.rep === 1);
  const colorOf = variantPalette(series.memory.map((s) => s.variant));
  const repeated = [...series.memory, ...series.okRps].some((l) => l.rep > 1);
  const repNote = repeated ? ' The first repetition of each variant.' : '';
  const limits = data.runs.flatMap((r) => r.rows).filter((r) => r.memoryLimitMiB !== null);
  const byLimit = new Map<number, string[]>();
  for (const r of limits) byLimit.set(r.memoryLimitMiB!, [...(byLimit.get(r.memoryLimitMiB!) ?? []), r.variant]);
  const limitNote = [...byLimit].map(([mib, vs]) => `${formatLimit(mib)} (${[...new Set(vs)].join(', ')})`).join(', ');
  const measures: Measure[] = [
    {
      key: 'memory',
      id: 'memory',
      title: 'Agent memory (MiB)',
      yTitle: 'MiB',
      lines: first(series.memory),
      reduce: 'max',
      axis: 'fit',
      note: `0 while the agent was down (OOM-killed) or not yet started${limitNote ? `. Memory limits: ${limitNote}` : ''}`,
    },
    {
      key: 'served',
      id: 'rps',
      title: 'Calls served per second',
      yTitle: 'calls/s',
      lines: first(series.okRps),
      reduce: 'mean',
      axis: 'rate',
      note: 'storm calls that succeeded',
    },
    {
      key: 'rejected',
      id: 'rps',
      title: 'Calls rejected per second',
      yTitle: 'calls/s',
      lines: first(series.rejectedRps),
      reduce: 'mean',
      axis: 'rate',
      note: 'storm calls the rate limiter rejected; variants that rejected none have no line',
    },
  ];
  const out: string[] = [];
  for (const m of measures) {
    if (m.lines.length === 0 || !wanted.has(m.key)) continue;
    if (out.length > 0) out.push('');
    out.push(...chart(m, range, colorOf, repNote, maxPoints));
  }
  return out;
}
