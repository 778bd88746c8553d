// Exports a run folder's time series for other tools (`attestorm export`): OpenMetrics text for
// Prometheus and its kin, CSV for spreadsheets. The only surface other folders use.
import { ConfigError } from '../errors.js';
import { loadRun } from '../report/index.js';
import { renderCsv } from './csv.js';
import { renderOpenMetrics } from './openmetrics.js';
import { runSeries } from './series.js';

export const EXPORT_FORMATS = ['openmetrics', 'csv'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export function parseExportFormat(name: string): ExportFormat {
  if ((EXPORT_FORMATS as readonly string[]).includes(name)) return name as ExportFormat;
  throw new ConfigError(`--format must be one of ${EXPORT_FORMATS.join(', ')}, got ${JSON.stringify(name)}`);
}

/** The run folder's series in `format`, read as the reports read it (loadRun). */
export async function exportRun(runDir: string, format: ExportFormat): Promise<string> {
  const series = runSeries(await loadRun(runDir));
  return format === 'csv' ? renderCsv(series) : renderOpenMetrics(series);
}

export { escapeLabelValue } from './openmetrics.js';
export { MEASURES, type Measure } from './series.js';
