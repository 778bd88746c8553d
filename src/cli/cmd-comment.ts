// `attestorm comment`: a pull-request comment body in Markdown for a run folder — the verdict, each
// variant's figures against a baseline as the gate judged them, a memory chart — with a hidden
// marker a workflow finds its earlier comment by. Reads the folder offline, as `report` does.
import type { Argv, CommandModule } from 'yargs';
import { commentOnRun, TOLERANCE_HELP } from '../ci/index.js';
import { writeOutput } from './write-output.js';

interface CommentArgs {
  runDir: string;
  baseline?: string;
  tolerance?: string[];
  out?: string;
}

export const commentCommand: CommandModule<object, CommentArgs> = {
  command: 'comment <run-dir>',
  describe:
    'Write a pull-request comment body (Markdown) for a run: verdict, figures per variant against a baseline with changes and tolerance verdicts, a memory chart, under 65,536 characters',
  builder: (y: Argv<object>) =>
    y
      .positional('run-dir', { type: 'string', demandOption: true, describe: 'Run folder written by `attestorm run` (e.g. reports/latest)' })
      .option('baseline', {
        type: 'string',
        describe:
          'Run folder or results.json of an earlier run of the same scenario, compared as `run --baseline` compares. Default: the baseline the run was compared with, if any; else the run alone',
      })
      .option('tolerance', { type: 'string', array: true, describe: `With --baseline. ${TOLERANCE_HELP}` })
      .option('out', { type: 'string', describe: 'File to write. Default: stdout' })
      .example('$0 comment reports/latest --baseline runs/main --out comment.md', 'Against a stored run of the main branch')
      .example('$0 comment reports/latest | gh pr comment 42 --body-file -', 'Post it with the GitHub CLI')
      .epilog(
        'The first line is an HTML comment, <!-- attestorm-comment scenario=<name> -->, that GitHub does not show: a workflow finds its earlier comment by it and edits that instead of adding another (docs/ci.md). The exit status is 0 whatever the verdict: `attestorm run --baseline` is the gate.',
      )
      .strict() as unknown as Argv<CommentArgs>,
  handler: async (args) => {
    const { text } = await commentOnRun(args.runDir, {
      ...(args.baseline !== undefined ? { baseline: args.baseline } : {}),
      ...(args.tolerance !== undefined ? { tolerance: args.tolerance } : {}),
    });
    await writeOutput(text, args.out);
  },
};
