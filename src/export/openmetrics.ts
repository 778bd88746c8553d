// A run's time series as OpenMetrics text (application/openmetrics-text 1.0.0), for Prometheus
// backfilling (`promtool tsdb create-blocks-from openmetrics`) and anything else that reads it: each
// family's TYPE, UNIT and HELP lines then all its samples, each series' samples together in
// increasing time, timestamps in seconds, ending in `# EOF`.
import { MEASURES, type Measure, type RunSeries } from './series.js';

/** A label value inside double quotes: backslash, quote and newline escaped, as the format requires. */
export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** HELP text: backslash and newline escaped (quotes need none there). */
function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** Seconds since the epoch, to the millisecond the samples carry. */
function seconds(ms: number): string {
  return (ms / 1000).toFixed(3);
}

function number(v: number): string {
  return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(12)));
}

export function renderOpenMetrics(series: RunSeries): string {
  const out: string[] = [];
  const families = [...new Set(MEASURES.map((m) => m.family))];
  for (const family of families) {
    const measures = MEASURES.filter((m) => m.family === family);
    const head = measures[0]!;
    const lines: string[] = [];
    for (const rep of series.repetitions) {
      for (const m of measures) {
        const labels = labelSet(series.scenario, rep.variant, rep.rep, m);
        for (const row of rep.rows) {
          const v = row.values[m.id];
          if (v === undefined || !Number.isFinite(v)) continue;
          lines.push(`${sampleName(m)}{${labels}} ${number(v)} ${seconds(series.startMs + row.t)}`);
        }
      }
    }
    // A family with no sample (no agent metrics, say) is left out rather than declared empty.
    if (lines.length === 0) continue;
    out.push(`# TYPE ${family} ${head.type}`);
    if (head.unit) out.push(`# UNIT ${family} ${head.unit}`);
    out.push(`# HELP ${family} ${escapeHelp(head.help)}`);
    out.push(...lines);
  }
  out.push('# EOF');
  return `${out.join('\n')}\n`;
}

function sampleName(m: Measure): string {
  return m.type === 'counter' ? `${m.family}_total` : m.family;
}

function labelSet(scenario: string, variant: string, rep: number, m: Measure): string {
  const pairs: [string, string][] = [
    ['scenario', scenario],
    ['variant', variant],
    ['rep', String(rep)],
  ];
  if (m.label) pairs.push(m.label);
  return pairs.map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(',');
}
