// `attestorm bisect-step`: one bisect step on the work tree `git bisect run` checked out, its mark
// in git's exit codes (0 good, 1 bad, 125 skip), so a maintainer can drive the bisection from git.
// Anything else — bad input, a machine that cannot run the storm — exits 128, which stops git's
// bisection instead of being read as "bad".
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { BISECT_EXIT, bisectStep, builderFor, checkBeforeBuilding, stepSettings } from '../bisect/index.js';
import { ConfigError } from '../errors.js';
import { runCleanups } from '../util/index.js';
import { STEP_OPTIONS, type StepArgs } from './bisect-options.js';
import { reportFatal } from './report-fatal.js';

interface BisectStepArgs extends StepArgs {
  binDir?: string;
  workTree?: string;
  out?: string;
}

const EXIT_HELP = `Exit status (what git bisect run reads):
  ${BISECT_EXIT.good}    good: the variant passed
  ${BISECT_EXIT.bad}    bad: the variant failed
  ${BISECT_EXIT.skip}  skip: the build failed, the agent could not run, or the verdict was inconclusive
  ${BISECT_EXIT.abort}  invalid input or the storm could not run here: git bisect run stops
  ${BISECT_EXIT.interrupted}  interrupted: git bisect run stops`;

async function step(args: BisectStepArgs): Promise<number> {
  const problems: string[] = [];
  if (args.binDir !== undefined && (args.build !== undefined || args.replace?.length || args.goCache !== undefined))
    problems.push('--bin-dir names a folder already built: drop --build, --replace and --go-cache');
  const settings = stepSettings(args, problems);
  if (problems.length || !settings) throw new ConfigError(problems);
  const builder = args.binDir !== undefined ? null : builderFor(settings.build);
  await checkBeforeBuilding(settings.spec, builder);
  const result = await bisectStep({
    workTree: resolve(args.workTree ?? '.'),
    spec: settings.spec,
    builder,
    binDir: args.binDir === undefined ? null : resolve(args.binDir),
    out: resolve(args.out ?? join(tmpdir(), 'attestorm-bisect-step')),
  });
  process.stdout.write(`${result.judgement?.mark ?? 'interrupted'} ${result.commit} ${result.dir}\n`);
  return result.exit;
}

export const bisectStepCommand: CommandModule<object, BisectStepArgs> = {
  command: 'bisect-step [scenario]',
  describe: 'One bisect step on the checked-out work tree for git bisect run: build it (or take --bin-dir), storm the variant, exit 0 good, 1 bad, 125 skip',
  builder: (y: Argv<object>) =>
    y
      .positional('scenario', { type: 'string', describe: 'Scenario YAML file (an absolute path: git bisect run starts it in the work tree)' })
      .options(STEP_OPTIONS)
      .option('bin-dir', { type: 'string', describe: 'A folder already built (by your own git bisect run script): run it, build nothing' })
      .option('work-tree', { type: 'string', describe: 'The work tree to build. Default: the one holding the current folder' })
      .option('out', {
        type: 'string',
        describe:
          "Parent of the step's folder (<commit>-<time>/: build.log, bin/, the run folder). Default: <tmp>/attestorm-bisect-step, outside the work tree git checks out",
      })
      .example(
        'git bisect start v1.15.3 v1.15.2 && git bisect run attestorm bisect-step /path/to/seed-512mi-4x300-releases.yaml --variant v1-15-3 --set expect.v1-15-3.oomKilled=false',
        "git's own bisection of a SPIRE checkout, each step built and stormed",
      )
      .epilog(EXIT_HELP)
      // A flag git bisect run would read as "bad" (exit 2) must stop it instead.
      // Nothing has started while flags are parsed: ending here leaves nothing behind.
      .fail((msg, err) => {
        reportFatal(err ?? new ConfigError(msg));
        process.exit(BISECT_EXIT.abort);
      })
      .strict() as unknown as Argv<BisectStepArgs>,
  handler: async (args) => {
    let code: number;
    try {
      code = await step(args);
    } catch (err) {
      reportFatal(err);
      code = BISECT_EXIT.abort;
    }
    await runCleanups();
    process.exitCode = code;
  },
};
