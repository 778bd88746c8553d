// `attestorm history`: a trend report over many run folders of one scenario (nightly artifacts),
// oldest first, marking runs a baseline gate against the previous run would have failed.
import { join } from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { gateFailed, parseTolerances, TOLERANCE_HELP, writeHistory } from '../ci/index.js';
import { firstMissing, handBackOwner, handBackTree } from '../util/index.js';

interface HistoryArgs {
  folder: string;
  out?: string;
  scenario?: string;
  tolerance?: string[];
}

export const historyCommand: CommandModule<object, HistoryArgs> = {
  command: 'history <folder>',
  describe: 'Trend report (history.html, history.json) over the run folders under a folder: peak memory, OOM kills and bystander success per variant',
  builder: (y: Argv<object>) =>
    y
      .positional('folder', { type: 'string', demandOption: true, describe: 'Folder holding run folders (searched up to 4 levels deep for results.json)' })
      .option('out', { type: 'string', describe: 'Output folder. Default: <folder>/history' })
      .option('scenario', { type: 'string', describe: 'Scenario to chart when the folder holds runs of several' })
      .option('tolerance', { type: 'string', array: true, describe: `Tolerance of the gate against the previous run. ${TOLERANCE_HELP}` })
      .example('$0 history nightly-artifacts/', 'Write nightly-artifacts/history/history.html')
      .example('$0 history runs/ --scenario quick --tolerance peakMemory=5% --out reports/trend', 'One scenario, a stricter memory gate')
      .strict() as unknown as Argv<HistoryArgs>,
  handler: (args) => {
    // Flags first: a bad tolerance fails before any folder is read.
    const tolerances = parseTolerances(args.tolerance);
    const out = args.out ?? join(args.folder, 'history');
    const handBack = { path: firstMissing(out) ?? out, owner: handBackOwner(out) };
    const { files, model } = writeHistory(args.folder, {
      tolerances,
      toleranceText: args.tolerance?.length ? args.tolerance.join(',') : '10% (defaults)',
      ...(args.scenario ? { scenario: args.scenario } : {}),
      ...(args.out ? { outDir: args.out } : {}),
    });
    const failed = model.runs.filter((r) => gateFailed(r));
    process.stderr.write(
      `${model.scenario}: ${model.runs.length} runs, ${failed.length} would have failed a baseline gate against the previous run${failed.length ? ` (${failed.map((r) => r.dir).join(', ')})` : ''}` +
        `${model.skipped.length ? `; ${model.skipped.length} folders left out` : ''}\n`,
    );
    for (const f of files) process.stdout.write(`${f}\n`);
    handBackTree(handBack.path, handBack.owner);
  },
};
