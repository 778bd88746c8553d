// `attestorm export`: a run folder's time series as OpenMetrics text or CSV, to put a run beside a
// team's own metrics (Prometheus backfill, Grafana, a spreadsheet). Reads the folder as `report` does.
import type { Argv, CommandModule } from 'yargs';
import { EXPORT_FORMATS, exportRun, parseExportFormat } from '../export/index.js';
import { writeOutput } from './write-output.js';

interface ExportArgs {
  runDir: string;
  format: string;
  out?: string;
}

export const exportCommand: CommandModule<object, ExportArgs> = {
  command: 'export <run-dir>',
  describe:
    "Write a run's time series — agent memory and limit, storm calls per second by outcome, storm workers, bystanders served, attestations in flight, open connections, OOM kills — as OpenMetrics text or CSV, labelled scenario, variant and rep",
  builder: (y: Argv<object>) =>
    y
      .positional('run-dir', { type: 'string', demandOption: true, describe: 'Run folder written by `attestorm run` (e.g. reports/latest)' })
      .option('format', {
        type: 'string',
        choices: EXPORT_FORMATS,
        default: 'openmetrics',
        describe:
          'openmetrics: TYPE, UNIT and HELP per family, timestamps in seconds, ending in # EOF; csv: a header, then one row per sample time per variant and repetition',
      })
      .option('out', { type: 'string', describe: 'File to write. Default: stdout' })
      .example('$0 export reports/latest --format openmetrics --out run.om', 'For Prometheus: promtool tsdb create-blocks-from openmetrics run.om data/')
      .example('$0 export reports/latest --format csv > run.csv', 'For a spreadsheet')
      .epilog(
        "Timestamps are absolute: the run's start plus each sample's time since its variant's load started, so every variant's series begins at the run's start and they line up, as on the report's charts (the variants ran one after another).",
      )
      .strict() as unknown as Argv<ExportArgs>,
  handler: async (args) => {
    await writeOutput(await exportRun(args.runDir, parseExportFormat(args.format)), args.out);
  },
};
