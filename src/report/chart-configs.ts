// The chart definitions, built once from derived data and used by both renderers: the HTML page
// hands them to Chart.js in the browser, the PNG renderer to Chart.js on a Node canvas. They are
// plain JSON (no callbacks) so the page can embed them verbatim.
import type { ChartConfiguration } from 'chart.js';
import type { ReportData, SeriesLine } from './report-model.js';
import { memoryChart } from './chart-memory.js';
import { kubeletFetchChart } from './chart-kubelet.js';
import { perSecondText, plottedValues, rateAxis, spikesAbove } from './chart-axis.js';
import { FALLBACK_COLORS, lineDataset, offScaleDataset, timeOptions, variantPalette, withPointLegend, type ChartSpec, type ColorOf } from './chart-kit.js';

/** The rate lines of the calls-per-second chart, each with its dataset options by outcome. */
function rateLines(series: ReportData['series']): { line: SeriesLine; extra: Record<string, unknown> }[] {
  const dashed = (dash: number[]) => ({ borderDash: dash, borderWidth: 1.5 });
  return [
    ...series.okRps.map((s) => ({ line: { ...s, label: `${s.label} ok` }, extra: {} })),
    ...series.rejectedRps.map((s) => ({ line: { ...s, label: `${s.label} rate-limited` }, extra: dashed([3, 3]) })),
    ...series.deadlineExceededRps.map((s) => ({ line: { ...s, label: `${s.label} deadline exceeded` }, extra: dashed([10, 4]) })),
    ...series.errorRps.map((s) => ({ line: { ...s, label: `${s.label} other errors` }, extra: dashed([10, 3, 2, 3]) })),
  ];
}

/**
 * Calls per second by outcome, on an axis no single variant's spike can take over (rateAxis): a
 * spike runs off the top edge, where a ▲ in its line's colour carries its peak value.
 */
function rpsChart(series: ReportData['series'], colorOf: ColorOf): ChartSpec | null {
  if (series.okRps.length === 0) return null;
  const lines = rateLines(series);
  const axis = rateAxis(plottedValues(lines.map((l) => l.line)));
  const datasets: unknown[] = lines.map((l) => lineDataset(colorOf, l.line, l.extra));
  const spiked: string[] = [];
  for (const { line } of lines) {
    const spikes = spikesAbove(line.points, axis.max);
    if (spikes.length === 0) continue;
    spiked.push(`${line.label} (up to ${perSecondText(Math.max(...spikes.map((p) => p.value)))})`);
    const points = spikes.map((p) => ({ ...p, text: perSecondText(p.value) }));
    datasets.push(offScaleDataset({ label: `${line.label} ↑ (above the axis)`, color: colorOf(line.variant), top: axis.max, points }));
  }
  const title = 'Calls per second by outcome';
  const options = withPointLegend(timeOptions(title, 'calls/s', series.xRange));
  const subtitle = 'Axis fitted to most seconds: ▲ marks a spike above it, with its peak.';
  const clipNote = spiked.length > 0 ? `The axis is fitted to most seconds; above it (▲, with the peak): ${spiked.join(', ')}.` : '';
  return {
    id: 'rps',
    title,
    unit: 'calls/s',
    time: true,
    description: `Per variant: successful calls (solid), rate-limited (dotted), deadline exceeded (dashed) and other errors (dash-dot) per second; an outcome that never happened has no line. x = 0 is when the calls started; negative x is pod start-up and warm-up.${clipNote ? ` ${clipNote}` : ''}`,
    config: {
      type: 'line',
      data: { datasets },
      options: {
        ...options,
        plugins: { ...options.plugins, ...(clipNote ? { subtitle: { display: true, text: subtitle } } : {}) },
        scales: { ...options.scales, y: { ...options.scales.y, min: 0, max: axis.max } },
      },
    } as ChartConfiguration,
  };
}

/** Share of the bystanders' calls served each second. */
function bystandersChart(series: ReportData['series'], colorOf: ColorOf): ChartSpec | null {
  if (series.bystanderSuccess.length === 0) return null;
  return {
    id: 'bystanders',
    time: true,
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

/** Storm workers calling per second: drawn only when the storm's size changed (burst, churn, a crash). */
function stormChart(series: ReportData['series'], colorOf: ColorOf): ChartSpec | null {
  if (series.stormWorkers.length === 0) return null;
  return {
    id: 'storm',
    time: true,
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

/** Attestations in flight, from the agent metrics. */
function inflightChart(series: ReportData['series'], colorOf: ColorOf): ChartSpec | null {
  if (series.inflight.length === 0) return null;
  return {
    id: 'inflight',
    time: true,
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

/** Rejections per limiter key type. */
function rejectionsChart(data: ReportData, several: boolean): ChartSpec | null {
  const rejections = data.runs.flatMap((r) => r.rejections);
  const keyTypes = [...new Set(rejections.flatMap((r) => Object.keys(r.byKeyType)))].sort();
  if (keyTypes.length === 0) return null;
  const labels = rejections.map((r) => `${several ? `${r.run} · ` : ''}${r.variant}`);
  const datasets = keyTypes.map((key, i) => ({
    label: key,
    data: rejections.map((r) => r.byKeyType[key] ?? 0),
    backgroundColor: FALLBACK_COLORS[i % FALLBACK_COLORS.length],
  }));
  return {
    id: 'rejections',
    time: false,
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
  const colorOf = variantPalette(series.memory.map((s) => s.variant));
  const specs = [
    memoryChart(series, colorOf),
    rpsChart(series, colorOf),
    bystandersChart(series, colorOf),
    stormChart(series, colorOf),
    inflightChart(series, colorOf),
    rejectionsChart(data, several),
    ...data.runs.flatMap((r) => r.fetchTimelines).map((t) => kubeletFetchChart(t, several, series.xRange)),
  ];
  return specs.filter((c): c is ChartSpec => c !== null);
}
