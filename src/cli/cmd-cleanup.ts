// `attestorm cleanup`: removes what killed runs left behind (cgroups with their processes, temp
// dirs, stale sockets). Live runs are recognised by their owner process and left alone.
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { findIncompleteRuns, markIncomplete } from '../report/index.js';
import { cleanupLeftovers, tempRoot } from '../sandbox/index.js';

interface CleanupArgs {
  'dry-run': boolean;
  reports: string;
}

export const cleanupCommand: CommandModule<object, CleanupArgs> = {
  command: 'cleanup',
  describe: `Remove leftovers of runs that were killed (pod processes, cgroups under attestorm/, run folders <run> in ${tempRoot()} (this user's, named like a run, their owner gone), stale sockets)`,
  builder: (y: Argv) =>
    y
      .option('dry-run', { type: 'boolean', default: false, describe: 'List what would be removed; remove nothing' })
      .option('reports', {
        type: 'string',
        default: 'reports',
        describe: 'Folder of run folders: those still saying "running" whose runner is gone are marked "incomplete"',
      })
      .example('$0 cleanup --dry-run', 'show leftovers of killed runs')
      .example('$0 cleanup', 'remove them') as Argv<CleanupArgs>,
  handler: async (args: ArgumentsCamelCase<CleanupArgs>) => {
    const dryRun = args['dry-run'];
    const found = await cleanupLeftovers({ dryRun });
    for (const dir of findIncompleteRuns(args.reports)) {
      if (!dryRun) markIncomplete(dir);
      found.push(`run folder ${dir}: status running → incomplete (its runner is gone)`);
    }
    const verb = dryRun ? 'would remove' : 'removed';
    // Processes are killed rather than removed.
    for (const item of found) {
      const how = item.startsWith('pid ') ? (dryRun ? 'would kill' : 'killed') : item.startsWith('run folder ') ? (dryRun ? 'would mark' : 'marked') : verb;
      process.stdout.write(`${how} ${item}\n`);
    }
    process.stderr.write(found.length ? `attestorm cleanup: ${verb} ${found.length} leftover(s)\n` : 'attestorm cleanup: nothing left behind by killed runs\n');
  },
};
