// What every chart definition shares: the chart ids, the spec both renderers take, the colours
// (colour-blind safe; a variant keeps its colour across charts) and the dataset and axis options.
import type { ChartConfiguration } from 'chart.js';
import { isPlacementName, type PlacementName } from '../contract/index.js';
import type { SeriesLine } from './report-model.js';

/** The fixed charts, and one kubelet fetch timeline per variant (`kubelet-<variant>`, `kubelet-<run>-<variant>` comparing runs). */
export type ChartId = 'memory' | 'rps' | 'bystanders' | 'storm' | 'inflight' | 'rejections' | `kubelet-${string}`;

export interface ChartSpec {
  id: ChartId;
  title: string;
  /** Unit shown in tooltips ("MiB", "calls/s", "ms", ...). */
  unit: string;
  /** What the chart shows, in words, for figcaptions, alt text and readers without JavaScript. */
  description: string;
  config: ChartConfiguration;
  /** x is time (seconds since the calls started): the page lets these zoom together and share a cursor. */
  time: boolean;
}

// Colour-blind-safe hues (Okabe–Ito), one per placement so a variant named after a placement keeps its colour on every chart.
const PLACEMENT_COLORS: Record<PlacementName, string> = {
  'pre-attestation': '#009E73',
  'post-attestation': '#E69F00',
  disabled: '#CC79A7',
};
export const FALLBACK_COLORS = ['#0072B2', '#D55E00', '#56B4E9', '#000000'];
// Variants named otherwise take these in order of appearance (the rest of Okabe–Ito, then Tol's muted).
const VARIANT_COLORS = ['#0072B2', '#D55E00', '#56B4E9', '#000000', '#882255', '#44AA99', '#999933', '#F0E442', '#332288', '#AA4499'];
/** Later runs in a comparison are dashed so that runs differ while variants keep their hue. */
const RUN_DASHES: number[][] = [[], [8, 4], [2, 3], [12, 3, 2, 3]];

export type ColorOf = (name: string) => string;

/** Each palette colour in words, for charts without a legend (Mermaid's): "green", "orange", … */
const COLOR_NAMES: Record<string, string> = {
  '#009E73': 'green',
  '#E69F00': 'orange',
  '#CC79A7': 'pink',
  '#0072B2': 'blue',
  '#D55E00': 'red',
  '#56B4E9': 'sky blue',
  '#000000': 'black',
  '#882255': 'wine',
  '#44AA99': 'teal',
  '#999933': 'olive',
  '#F0E442': 'yellow',
  '#332288': 'indigo',
  '#AA4499': 'purple',
};

export function colorName(hex: string): string {
  return COLOR_NAMES[hex.toUpperCase()] ?? hex;
}

/**
 * One colour per variant across every chart of a report: the placements' own hues for variants
 * named after them, the others a colour each in order of first appearance.
 */
export function variantPalette(names: Iterable<string>): ColorOf {
  const assigned = new Map<string, string>();
  let next = 0;
  const colorOf = (name: string): string => {
    let c = assigned.get(name) ?? (isPlacementName(name) ? PLACEMENT_COLORS[name] : undefined);
    if (c === undefined) {
      c = VARIANT_COLORS[next++ % VARIANT_COLORS.length]!;
      assigned.set(name, c);
    }
    return c;
  };
  for (const n of names) colorOf(n);
  return colorOf;
}

export function lineDataset(colorOf: ColorOf, s: SeriesLine, extra: Record<string, unknown> = {}) {
  return {
    label: s.label,
    data: s.points,
    borderColor: colorOf(s.variant),
    backgroundColor: colorOf(s.variant),
    borderWidth: 2,
    borderDash: RUN_DASHES[s.runIndex % RUN_DASHES.length],
    pointRadius: 0,
    pointHitRadius: 6,
    pointStyle: 'line',
    tension: 0,
    ...extra,
  };
}

export function timeOptions(title: string, yTitle: string, range: { min: number; max: number } | null) {
  // Pin the axis to the data so Chart.js does not pad it out to the next round tick.
  // No ticks at the pinned ends: they crowd the round ticks next to them ("30 31").
  const x = {
    type: 'linear',
    title: { display: true, text: 'seconds since the calls started (negative: pods starting, warm-up)' },
    ticks: { includeBounds: false },
    ...(range ? { min: range.min, max: range.max } : {}),
  };
  return {
    parsing: false,
    normalized: true,
    interaction: { mode: 'nearest', axis: 'x', intersect: false },
    plugins: { title: { display: true, text: title }, legend: { position: 'bottom' } },
    scales: { x, y: { beginAtZero: true, title: { display: true, text: yTitle } } },
  };
}

/**
 * Values above a chart's y-axis, marked ▲ at the top edge in the line's colour. offScale holds the
 * real values (the page's tooltip shows them) and offScaleLabels their text, which the off-scale
 * label plugin writes beside each mark.
 */
export function offScaleDataset(o: { label: string; color: string; top: number; points: { x: number; value: number; text: string }[] }) {
  return {
    type: 'scatter',
    label: o.label,
    data: o.points.map((p) => ({ x: p.x, y: o.top })),
    offScale: o.points.map((p) => p.value),
    offScaleLabels: o.points.map((p) => p.text),
    borderColor: o.color,
    backgroundColor: o.color,
    pointStyle: 'triangle',
    pointRadius: 7,
    pointHoverRadius: 8,
    clip: false,
    showLine: false,
  };
}

/** Legend keys drawn as each dataset's point style, so an OOM kill shows as the × it is on the chart. */
export function withPointLegend<T extends { plugins: { legend: Record<string, unknown> } }>(options: T): T {
  options.plugins.legend = { ...options.plugins.legend, labels: { usePointStyle: true } };
  return options;
}
