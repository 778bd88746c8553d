// `attestorm report`: render reports from saved run folders, offline. With several folders, a
// comparison against the first (the baseline).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { baselineSectionsOf, compareRunFolders, parseTolerances, TOLERANCE_HELP, type Tolerances } from '../ci/index.js';
import { parseFormats, renderReports } from '../report/index.js';

interface ReportArgs {
  runDir: string[];
  out?: string;
  format: string;
  tolerance?: string[];
}

export const reportCommand: CommandModule<object, ReportArgs> = {
  command: 'report <run-dir..>',
  describe: 'Render report.html, summary.md, PNG charts and report.json from run folders (several: compare against the first)',
  builder: (y: Argv<object>) =>
    y
      .positional('run-dir', { type: 'string', array: true, demandOption: true, describe: 'Run folder(s) written by `attestorm run`' })
      .option('out', {
        type: 'string',
        describe: 'Output folder. Default: the run folder (one run) or reports/compare-<timestamp>/ (several)',
      })
      .option('format', { type: 'string', default: 'html,md,png,json', describe: 'Comma-separated formats: html, md, png, json' })
      .option('tolerance', { type: 'string', array: true, describe: `For the baseline verdict table of several runs. ${TOLERANCE_HELP}` })
      .example('$0 report runs/quick-20260101T120000Z', 'Write the reports into that run folder')
      .example('$0 report runs/before runs/after --out reports/limiter-change --format html,md', 'Compare two runs')
      .strict() as unknown as Argv<ReportArgs>,
  handler: async (args) => {
    // Validate flags before reading anything, so a typo fails fast with the rule that was broken.
    const formats = parseFormats(args.format);
    const tolerances = parseTolerances(args.tolerance);
    // One run folder compared with a baseline when it ran: the comparison stays in its reports.
    const dirs = Array.isArray(args.runDir) ? args.runDir : [args.runDir];
    const extraSections = dirs.length === 1 ? baselineSectionsOf(readResultsBaseline(dirs[0]!)) : [];
    const { files } = await renderReports(args.runDir, { formats, extraSections, ...(args.out ? { outDir: args.out } : {}) });
    // Several runs: the same verdict table `run --baseline` prints, each later run against the first.
    if (args.runDir.length > 1 && files.length > 0) files.push(...baselineTables(args.runDir, tolerances, path.dirname(files[0]!), formats.includes('md')));
    for (const f of files) process.stdout.write(`${f}\n`);
  },
};

/** Prints the baseline verdict table of each later run against the first; writes baseline.md with md. */
function baselineTables(runDirs: string[], tolerances: Tolerances, outDir: string, md: boolean): string[] {
  const { text, markdown } = compareRunFolders(runDirs, tolerances);
  process.stderr.write(text);
  if (!md) return [];
  const file = path.join(outDir, 'baseline.md');
  writeFileSync(file, markdown);
  return [file];
}

function readResultsBaseline(dir: string): { baseline?: unknown } {
  try {
    return JSON.parse(readFileSync(path.join(dir, 'results.json'), 'utf8')) as { baseline?: unknown };
  } catch {
    return {};
  }
}
