// The kubelet fetch timeline of one variant: each GET /pods as a bar from its arrival to its last
// byte, in lanes so that overlapping fetches stand apart (right axis), against what waited on the
// kubelet (left axis): attestations in flight, SPIRE's open connections and its goroutines waiting
// for a pod list. For the page and the PNGs (a Chart.js spec) and for summary.md (Mermaid).
import type { ChartConfiguration } from 'chart.js';
import { colorName, timeOptions, type ChartSpec } from './chart-kit.js';
import { MAX_FETCH_BARS } from './kubelet-fetches.js';
import type { FetchBar, FetchTimeline } from './report-model.js';
import { resample } from './render-mermaid.js';

/** Lanes a timeline stacks overlapping fetches in; more at once share the top lane. */
const MAX_LANES = 24;
const WAIT_COLORS = ['#0072B2', '#E69F00', '#CC79A7', '#56B4E9'];
const FETCH_COLOR = '#009E73';
const FAILED_COLOR = '#D55E00';

/** Each fetch's lane: the lowest whose last fetch ended before this one arrived. */
function lanes(fetches: FetchBar[], until: number): number[] {
  const freeAt: number[] = [];
  return fetches.map((f) => {
    let lane = freeAt.findIndex((t) => t <= f.start);
    if (lane < 0) lane = freeAt.length < MAX_LANES ? freeAt.length : MAX_LANES - 1;
    freeAt[lane] = f.end ?? until;
    return lane + 1;
  });
}

/** Bars as one line dataset: each fetch two points on its lane, then a gap. */
function barPoints(fetches: FetchBar[], laneOf: number[], until: number) {
  return fetches.flatMap((f, i) => [
    { x: f.start, y: laneOf[i]! },
    { x: f.end ?? until, y: laneOf[i]! },
    { x: f.end ?? until, y: null },
  ]);
}

function chartId(t: FetchTimeline, several: boolean): `kubelet-${string}` {
  return several ? `kubelet-${t.runIndex + 1}-${t.variant}` : `kubelet-${t.variant}`;
}

export function kubeletFetchChart(t: FetchTimeline, several: boolean, xRange: { min: number; max: number } | null): ChartSpec {
  const drawn = [...t.fetches].sort((a, b) => a.start - b.start).slice(0, MAX_FETCH_BARS);
  const until = xRange?.max ?? Math.max(0, ...drawn.map((f) => f.end ?? f.start));
  const laneOf = lanes(drawn, until);
  const ok = drawn.map((f, i) => ({ f, lane: laneOf[i]! })).filter(({ f }) => f.status === 200);
  const other = drawn.map((f, i) => ({ f, lane: laneOf[i]! })).filter(({ f }) => f.status !== 200);
  const bars = (label: string, color: string, list: { f: FetchBar; lane: number }[]) => ({
    label,
    data: barPoints(
      list.map((x) => x.f),
      list.map((x) => x.lane),
      until,
    ),
    yAxisID: 'lanes',
    borderColor: color,
    backgroundColor: color,
    borderWidth: 5,
    pointRadius: 0,
    spanGaps: false,
    tension: 0,
  });
  const topLane = Math.max(1, ...laneOf) + 1;
  const datasets: unknown[] = [
    bars('kubelet GET /pods answered 200 (arrival → last byte)', FETCH_COLOR, ok),
    ...(other.length ? [bars('kubelet GET /pods not answered 200 (error, refused, never answered)', FAILED_COLOR, other)] : []),
    ...(t.folded.length
      ? [
          {
            type: 'scatter',
            label: 'a second with more fetches than drawn (counted, not drawn one by one)',
            data: t.folded.map((f) => ({ x: f.t + 0.5, y: topLane })),
            yAxisID: 'lanes',
            pointStyle: 'rect',
            pointRadius: 5,
            borderColor: '#000000',
            backgroundColor: '#000000',
          },
        ]
      : []),
    ...t.waiting.map((w, i) => ({
      label: w.label,
      data: w.points,
      yAxisID: 'y',
      borderColor: WAIT_COLORS[i % WAIT_COLORS.length],
      backgroundColor: WAIT_COLORS[i % WAIT_COLORS.length],
      borderWidth: 2,
      pointRadius: 0,
      stepped: true,
    })),
  ];
  const who = `${several ? `${t.run} · ` : ''}${t.variant}`;
  const title = `Kubelet fetches and what waited on them: ${who}`;
  const base = timeOptions(title, t.waiting.length ? 'waiting (count)' : '', xRange);
  const truncated = t.fetches.length > drawn.length ? ` The first ${drawn.length} of ${t.fetches.length} fetches are drawn.` : '';
  const folded = t.folded.reduce((n, f) => n + f.requests, 0);
  const rep = t.reps > 1 ? ` Repetition ${t.rep} of ${t.reps}.` : '';
  return {
    id: chartId(t, several),
    time: true,
    title,
    unit: '',
    description:
      `${who}: each kubelet GET /pods as a bar from its arrival to the last byte of its answer, stacked in lanes where fetches overlap (right axis), ` +
      `against ${t.waiting.length ? t.waiting.map((w) => w.label).join(', ') : 'nothing the agent reports (no metrics)'} (left axis).` +
      `${folded ? ` ${folded} fetches in seconds past the line cap are counted, not drawn (■).` : ''}${truncated}${rep}`,
    config: {
      type: 'line',
      data: { datasets },
      options: {
        ...base,
        scales: {
          ...base.scales,
          lanes: {
            position: 'right',
            min: 0,
            max: topLane + 1,
            title: { display: true, text: 'fetch lanes' },
            grid: { drawOnChartArea: false },
            ticks: { precision: 0 },
          },
        },
      },
    } as ChartConfiguration,
  };
}

/** Fetches in flight at each of `xs` (seconds): those whose bar covers the step. */
function inFlightAt(fetches: FetchBar[], xs: number[], until: number): number[] {
  const half = xs.length > 1 ? (xs[1]! - xs[0]!) / 2 : 0.5;
  return xs.map((x) => fetches.filter((f) => f.start < x + half && (f.end ?? until) >= x - half).length);
}

/** The timeline as a Mermaid xychart: fetches in flight per step as bars, what waited as lines. */
export function kubeletFetchMermaid(t: FetchTimeline, several: boolean, range: { min: number; max: number }, maxPoints: number): string[] {
  const span = range.max - range.min;
  const n = Math.max(2, Math.min(maxPoints, Math.floor(span) + 1));
  const xs = Array.from({ length: n }, (_, i) => range.min + (span * i) / (n - 1));
  const bars = inFlightAt(t.fetches, xs, range.max);
  const lines = t.waiting.map((w) => resample(w.points, xs, 'max'));
  const top = Math.max(1, ...bars, ...lines.flat());
  const who = `${several ? `${t.run} · ` : ''}${t.variant}`;
  const palette = [FETCH_COLOR, ...t.waiting.map((_, i) => WAIT_COLORS[i % WAIT_COLORS.length]!)];
  const order = [`kubelet fetches in flight (bars, ${colorName(FETCH_COLOR)})`, ...t.waiting.map((w, i) => `${w.label} (${colorName(palette[i + 1]!)})`)];
  const step = span / (n - 1);
  return [
    '```mermaid',
    `%%{init: {"themeVariables": {"xyChart": {"plotColorPalette": "${palette.join(', ')}"}}}}%%`,
    'xychart-beta',
    `  title "Kubelet fetches and what waited: ${who.replace(/"/g, "'")}"`,
    `  x-axis "seconds since the calls started" ${range.min} --> ${range.max}`,
    `  y-axis "count" 0 --> ${Math.ceil(top * 1.05)}`,
    `  bar [${bars.join(', ')}]`,
    ...lines.map((v) => `  line [${v.join(', ')}]`),
    '```',
    '',
    `In order: ${order.join(', ')}; in each step of ${step.toFixed(step < 10 ? 1 : 0)} s, the fetches whose arrival-to-last-byte span touches it and the highest reading of each line.${t.reps > 1 ? ` Repetition ${t.rep} of ${t.reps}.` : ''}`,
  ];
}
