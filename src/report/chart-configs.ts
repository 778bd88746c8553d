// The chart definitions, built once from derived data and used by both renderers: the HTML page
// hands them to Chart.js in the browser, the PNG renderer to Chart.js on a Node canvas. They are
// plain JSON (no callbacks) so the page can embed them verbatim.
import type { ChartConfiguration } from 'chart.js';
import type { ReportData, SeriesLine, Point } from './report-model.js';

export type ChartId = 'memory' | 'rps' | 'bystanders' | 'storm' | 'inflight' | 'latency' | 'rejections';

export interface ChartSpec {
  id: ChartId;
  title: string;
  /** Unit shown in tooltips ("MiB", "calls/s", "ms", ...). */
  unit: string;
  /** What the chart shows, in words, for figcaptions, alt text and readers without JavaScript. */
  description: string;
  config: ChartConfiguration;
}

// Colour-blind-safe hues (Okabe–Ito), one per placement so a placement keeps its colour on every chart.
const PLACEMENT_COLORS: Record<string, string> = {
  'pre-attestation': '#009E73',
  'post-attestation': '#E69F00',
  disabled: '#CC79A7',
};
const FALLBACK_COLORS = ['#0072B2', '#D55E00', '#56B4E9', '#000000'];
// Variants named otherwise take these in order of appearance (the rest of Okabe–Ito, then Tol's muted).
const VARIANT_COLORS = ['#0072B2', '#D55E00', '#56B4E9', '#000000', '#882255', '#44AA99', '#999933', '#F0E442', '#332288', '#AA4499'];
const OUTCOME_COLORS = ['#0072B2', '#E69F00', '#D55E00', '#999999', '#009E73'];
/** Later runs in a comparison are dashed so that runs differ while placements keep their hue. */
const RUN_DASHES: number[][] = [[], [8, 4], [2, 3], [12, 3, 2, 3]];

type ColorOf = (name: string) => string;

/**
 * One colour per variant across every chart of a report: the placements' own hues for variants
 * named after them, the others a colour each in order of first appearance.
 */
export function variantPalette(names: Iterable<string>): ColorOf {
  const assigned = new Map<string, string>();
  let next = 0;
  const colorOf = (name: string): string => {
    let c = assigned.get(name) ?? PLACEMENT_COLORS[name];
    if (c === undefined) {
      c = VARIANT_COLORS[next++ % VARIANT_COLORS.length]!;
      assigned.set(name, c);
    }
    return c;
  };
  for (const n of names) colorOf(n);
  return colorOf;
}

function lineDataset(colorOf: ColorOf, s: SeriesLine, extra: Record<string, unknown> = {}) {
  return {
    label: s.label,
    data: s.points,
    borderColor: colorOf(s.placement),
    backgroundColor: colorOf(s.placement),
    borderWidth: 2,
    borderDash: RUN_DASHES[s.runIndex % RUN_DASHES.length],
    pointRadius: 0,
    pointHitRadius: 6,
    pointStyle: 'line',
    tension: 0,
    ...extra,
  };
}

function timeOptions(title: string, yTitle: string, range: { min: number; max: number } | null) {
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

/** Legend keys drawn as each dataset's point style, so an OOM kill shows as the × it is on the chart. */
function withPointLegend<T extends { plugins: { legend: Record<string, unknown> } }>(options: T): T {
  options.plugins.legend = { ...options.plugins.legend, labels: { usePointStyle: true } };
  return options;
}

/**
 * The memory axis: fitted to what was measured (every sample, OOM kill and baseline peak), so the
 * curves fill the chart. A limit close above the data (up to LIMIT_REACH times the top) widens the
 * axis to show its line; one further up would squeeze every curve into the bottom of the chart, so it
 * stays off the scale and is marked at the top edge instead.
 */
const LIMIT_REACH = 1.4;

export interface MemoryScale {
  /** The y-axis maximum in MiB: a round number just above the fitted values. */
  max: number;
  /** Limits drawn as lines (within the axis) and limits marked at the top edge (above it). */
  inRange: ReportData['series']['limits'];
  above: ReportData['series']['limits'];
}

export function memoryScale(series: ReportData['series']): MemoryScale {
  const measured = Math.max(
    1,
    ...series.memory.flatMap((m) => m.points.map((p) => p.y ?? 0)),
    ...series.oomKills.flatMap((k) => k.points.map((p) => p.y ?? 0)),
    ...series.baselinePeaks.map((b) => b.mib),
  );
  const inRange = series.limits.filter((l) => l.mib <= LIMIT_REACH * measured);
  const above = series.limits.filter((l) => l.mib > LIMIT_REACH * measured);
  return { max: roundUp(1.05 * Math.max(measured, ...inRange.map((l) => l.mib))), inRange, above };
}

/** The next multiple of a 1-2-2.5-5 step that gives about eight ticks: 606 → 700, 134 → 140. */
function roundUp(value: number): number {
  const raw = value / 8;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= raw)!;
  return Math.ceil(value / step) * step;
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
  // the legend. offScaleMiB lets the page's tooltip show the limit rather than the arrow's height.
  for (const limit of scale.above) {
    datasets.push({
      type: 'scatter',
      label: `${limit.label} ↑ (above the axis)`,
      offScaleMiB: limit.mib,
      data: [{ x: range.min, y: scale.max }],
      borderColor: '#D00000',
      backgroundColor: '#D00000',
      pointStyle: 'triangle',
      pointRadius: 7,
      pointHoverRadius: 8,
      clip: false,
      showLine: false,
    });
  }
  for (const b of series.baselinePeaks) {
    datasets.push({
      label: b.label,
      data: [
        { x: range.min, y: b.mib },
        { x: range.max, y: b.mib },
      ],
      borderColor: colorOf(b.placement),
      backgroundColor: colorOf(b.placement),
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
function memoryChart(series: ReportData['series'], colorOf: ColorOf): ChartSpec | null {
  if (series.memory.length === 0) return null;
  const scale = memoryScale(series);
  const datasets: unknown[] = series.memory.map((s) => lineDataset(colorOf, s));
  datasets.push(...memoryOverlays(series, colorOf, scale));
  for (const s of series.oomKills) {
    datasets.push({
      type: 'scatter',
      label: `OOM kill · ${s.label}`,
      data: s.points,
      borderColor: '#D00000',
      backgroundColor: colorOf(s.placement),
      pointStyle: 'crossRot',
      pointRadius: 10,
      pointHoverRadius: 12,
      borderWidth: 3,
      showLine: false,
    });
  }
  const options = withPointLegend(timeOptions('Agent memory over time', 'agent memory (MiB)', series.xRange));
  const y = { ...options.scales.y, min: 0, max: scale.max };
  const above = scale.above.map((l) => l.label.replace(/^limit /, '')).join(', ');
  const plugins = {
    ...options.plugins,
    ...(above ? { subtitle: { display: true, text: `Axis fitted to the measured memory; the limit of ${above} is above it (▲ at the top edge).` } } : {}),
  };
  return {
    id: 'memory',
    title: 'Agent memory over time',
    unit: 'MiB',
    description: `Agent memory (cgroup usage, or RSS when emulated) per variant, with the memory limit and OOM kills (×)${above ? `; the axis is fitted to the measured memory, and the limit of ${above}, far above it, is marked ▲ at the top edge` : ''}. x = 0 is when the calls started (pods up): negative x is pod start-up and warm-up${series.loadEnd !== null ? `; after ${series.loadEnd.toFixed(0)} s the load drains and the agent is stopped` : ''}.`,
    config: { type: 'line', data: { datasets }, options: { ...options, plugins, scales: { ...options.scales, y } } } as ChartConfiguration,
  };
}

/** Calls per second by outcome. */
function rpsChart(series: ReportData['series'], colorOf: ColorOf): ChartSpec | null {
  if (series.okRps.length === 0) return null;
  const datasets = [
    ...series.okRps.map((s) => lineDataset(colorOf, { ...s, label: `${s.label} ok` })),
    ...series.rejectedRps.map((s) => lineDataset(colorOf, { ...s, label: `${s.label} rate-limited` }, { borderDash: [3, 3], borderWidth: 1.5 })),
    ...series.deadlineExceededRps.map((s) => lineDataset(colorOf, { ...s, label: `${s.label} deadline exceeded` }, { borderDash: [10, 4], borderWidth: 1.5 })),
    ...series.errorRps.map((s) => lineDataset(colorOf, { ...s, label: `${s.label} other errors` }, { borderDash: [10, 3, 2, 3], borderWidth: 1.5 })),
  ];
  return {
    id: 'rps',
    title: 'Calls per second by outcome',
    unit: 'calls/s',
    description:
      'Per variant: successful calls (solid), rate-limited (dotted), deadline exceeded (dashed) and other errors (dash-dot) per second; an outcome that never happened has no line. x = 0 is when the calls started; negative x is pod start-up and warm-up.',
    config: { type: 'line', data: { datasets }, options: timeOptions('Calls per second by outcome', 'calls/s', series.xRange) } as ChartConfiguration,
  };
}

/** Share of the bystanders' calls served each second. */
function bystandersChart(series: ReportData['series'], colorOf: ColorOf): ChartSpec | null {
  if (series.bystanderSuccess.length === 0) return null;
  return {
    id: 'bystanders',
    title: 'Bystanders served per second',
    unit: '',
    description:
      "Share of the well-behaved bystander pods' calls that succeeded, each second, per variant: what the limiter is there to protect. Gaps: no bystander call finished in that second.",
    config: {
      type: 'line',
      // Few bystander calls finish per second: join the seconds that have one, and show each as a point.
      data: { datasets: series.bystanderSuccess.map((s) => lineDataset(colorOf, s, { spanGaps: true, pointRadius: 2.5 })) },
      options: {
        ...timeOptions('Bystanders served per second', 'share of calls ok', series.xRange),
        scales: { ...timeOptions('', '', series.xRange).scales, y: { min: 0, max: 1, title: { display: true, text: 'share of calls ok' } } },
      },
    } as ChartConfiguration,
  };
}

/** Attestations in flight, from the agent metrics. */
/** Storm workers calling per second: drawn only when the storm's size changed (burst, churn, a crash). */
function stormChart(series: ReportData['series'], colorOf: ColorOf): ChartSpec | null {
  if (series.stormWorkers.length === 0) return null;
  return {
    id: 'storm',
    title: 'Storm workers calling',
    unit: 'workers',
    description:
      "Storm worker processes calling each second (the most at once), per variant: a burst's extra pods, churned or crashed pods change it. Drawn only when the storm's size changed.",
    config: {
      type: 'line',
      data: { datasets: series.stormWorkers.map((s) => lineDataset(colorOf, s, { stepped: true })) },
      options: timeOptions('Storm workers calling', 'workers', series.xRange),
    } as ChartConfiguration,
  };
}

function inflightChart(series: ReportData['series'], colorOf: ColorOf): ChartSpec | null {
  if (series.inflight.length === 0) return null;
  return {
    id: 'inflight',
    title: 'Attestations in flight',
    unit: 'attestations',
    description: 'Workload attestations running concurrently inside the agent, from its metrics endpoint.',
    config: {
      type: 'line',
      data: { datasets: series.inflight.map((s) => lineDataset(colorOf, s, { stepped: true })) },
      options: timeOptions('Attestations in flight', 'attestations', series.xRange),
    } as ChartConfiguration,
  };
}

/** Latency percentiles per placement and outcome. */
function latencyChart(data: ReportData, several: boolean): ChartSpec | null {
  const latency = data.runs.flatMap((r) => r.latency);
  if (latency.length === 0) return null;
  const labels = latency.map((l) => `${several ? `${l.run} · ` : ''}${l.placement} · ${l.outcome}`);
  const pct = [
    ['p50', 'p50Ms'],
    ['p90', 'p90Ms'],
    ['p99', 'p99Ms'],
    ['p99.9', 'p999Ms'],
    ['max', 'maxMs'],
  ] as const;
  const datasets = pct.map(([name, key], i) => ({
    label: name,
    data: latency.map((l) => l[key]),
    backgroundColor: OUTCOME_COLORS[i],
    borderColor: OUTCOME_COLORS[i],
  }));
  return {
    id: 'latency',
    title: 'Latency percentiles per outcome',
    unit: 'ms',
    description: 'Call latency percentiles over the load phase, per placement and outcome (log scale).',
    config: {
      type: 'bar',
      data: { labels, datasets },
      options: {
        interaction: { mode: 'index', intersect: false },
        plugins: { title: { display: true, text: 'Latency percentiles per outcome' }, legend: { position: 'bottom' } },
        scales: { y: { type: 'logarithmic', title: { display: true, text: 'ms (log scale)' } } },
      },
    } as ChartConfiguration,
  };
}

/** Rejections per limiter key type. */
function rejectionsChart(data: ReportData, several: boolean): ChartSpec | null {
  const rejections = data.runs.flatMap((r) => r.rejections);
  const keyTypes = [...new Set(rejections.flatMap((r) => Object.keys(r.byKeyType)))].sort();
  if (keyTypes.length === 0) return null;
  const labels = rejections.map((r) => `${several ? `${r.run} · ` : ''}${r.placement}`);
  const datasets = keyTypes.map((key, i) => ({
    label: key,
    data: rejections.map((r) => r.byKeyType[key] ?? 0),
    backgroundColor: FALLBACK_COLORS[i % FALLBACK_COLORS.length],
  }));
  return {
    id: 'rejections',
    title: 'Rate-limit rejections by key type',
    unit: 'calls',
    description:
      "Rate-limited calls per limiter key type (pod UID, OS UID, selector set, SPIFFE ID): the total is the load generator's count, the key types the agent's metrics; 'unattributed' are rejections made after the agent's last scrape before it died or stopped.",
    config: {
      type: 'bar',
      data: { labels, datasets },
      options: {
        interaction: { mode: 'index', intersect: false },
        plugins: { title: { display: true, text: 'Rate-limit rejections by key type' }, legend: { position: 'bottom' } },
        scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, title: { display: true, text: 'rejected calls' } } },
      },
    } as ChartConfiguration,
  };
}

export function buildChartSpecs(data: ReportData): ChartSpec[] {
  const { series } = data;
  const several = data.runs.length > 1;
  const colorOf = variantPalette(series.memory.map((s) => s.placement));
  const specs = [
    memoryChart(series, colorOf),
    rpsChart(series, colorOf),
    bystandersChart(series, colorOf),
    stormChart(series, colorOf),
    inflightChart(series, colorOf),
    latencyChart(data, several),
    rejectionsChart(data, several),
  ];
  return specs.filter((c): c is ChartSpec => c !== null);
}
