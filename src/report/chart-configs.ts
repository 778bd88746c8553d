// The chart definitions, built once from derived data and used by both renderers: the HTML page
// hands them to Chart.js in the browser, the PNG renderer to Chart.js on a Node canvas. They are
// plain JSON (no callbacks) so the page can embed them verbatim.
import type { ChartConfiguration } from 'chart.js';
import type { ReportData } from './report-model.js';
import { memoryChart } from './chart-memory.js';
import { FALLBACK_COLORS, lineDataset, OUTCOME_COLORS, timeOptions, variantPalette, type ChartSpec, type ColorOf } from './chart-kit.js';

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

/** Latency percentiles per variant and outcome. */
function latencyChart(data: ReportData, several: boolean): ChartSpec | null {
  const latency = data.runs.flatMap((r) => r.latency);
  if (latency.length === 0) return null;
  const labels = latency.map((l) => `${several ? `${l.run} · ` : ''}${l.variant} · ${l.outcome}`);
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
    description: 'Call latency percentiles over the load phase, per variant and outcome (log scale).',
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
  const labels = rejections.map((r) => `${several ? `${r.run} · ` : ''}${r.variant}`);
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
  const colorOf = variantPalette(series.memory.map((s) => s.variant));
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
