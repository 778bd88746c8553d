// A run's time series as CSV for spreadsheets and notebooks: a header, then one row per sample time
// per variant and repetition, with the absolute time (ISO 8601) and t, and an empty cell for what was
// not sampled at that time. The OOM-kill count is carried on every row.
import { MEASURES, type RunSeries } from './series.js';

/** A field quoted when it holds a comma, a quote or a line break (RFC 4180). */
function field(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

export function renderCsv(series: RunSeries): string {
  const header = ['timestamp', 't_seconds', 'scenario', 'variant', 'rep', ...MEASURES.map((m) => m.column)];
  const out = [header.join(',')];
  for (const rep of series.repetitions) {
    let kills = 0;
    for (const row of rep.rows) {
      kills = row.values.oomKills ?? kills;
      const cells = MEASURES.map((m) => {
        const v = m.id === 'oomKills' ? kills : row.values[m.id];
        return v === undefined || !Number.isFinite(v) ? '' : String(Number.isInteger(v) ? v : Number(v.toPrecision(12)));
      });
      out.push(
        [new Date(series.startMs + row.t).toISOString(), (row.t / 1000).toFixed(3), field(series.scenario), field(rep.variant), String(rep.rep), ...cells].join(
          ',',
        ),
      );
    }
  }
  return `${out.join('\n')}\n`;
}
