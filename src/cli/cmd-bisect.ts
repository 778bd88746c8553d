// `attestorm bisect`: the commit of the user's checkout that brings an OOM back, found by git's
// bisection with every step built, stormed and judged by the scenario's verdict rules.
import { resolve } from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import {
  builderFor,
  checkBeforeBuilding,
  defaultBisectDir,
  outcomeSentence,
  readState,
  resolveBisectSettings,
  runBisect,
  specOf,
  STATE_FILE,
  type BisectSettings,
} from '../bisect/index.js';
import { ConfigError, EXIT } from '../errors.js';
import { runCleanups } from '../util/index.js';
import { STEP_OPTIONS, type StepArgs } from './bisect-options.js';

interface BisectArgs extends StepArgs {
  source?: string;
  good?: string;
  bad?: string;
  out?: string;
  resume?: string;
  keepBuilds: boolean;
}

const EXIT_HELP = `Exit status:
  ${EXIT.OK}    git named the first bad commit (stdout: first bad commit: <commit> <subject>)
  ${EXIT.EXPECTATIONS_FAILED}    no single commit: skipped commits leave candidates, or the merge base of good and bad is already bad
  ${EXIT.INVALID_INPUT}    invalid input: flags, scenario, refs, variant (nothing was built)
  ${EXIT.RUN_FAILED}    the bisect could not go on (git failed, the machine cannot run the storm): bisect.json says so
  ${EXIT.INTERRUPTED}  interrupted: bisect.json says interrupted, the steps done are kept; the same command resumes

Each step: a worktree of the commit (in the bisect's folder, removed after), the build, the scenario's
variant on it, the mark from its verdict (passed good, failed bad, inconclusive or a failed build skip).
The bisect's folder holds bisect.json (the state), bisect.md, bisect.html and steps/<n>-<commit>/
(build.log and the run folder).`;

async function settingsOf(args: BisectArgs): Promise<{ settings: BisectSettings; dir: string }> {
  if (args.resume === undefined) {
    const settings = await resolveBisectSettings({ ...args, keepBuilds: args.keepBuilds });
    return { settings, dir: resolve(args.out ?? defaultBisectDir(settings)) };
  }
  const given = ['scenario', 'source', 'good', 'bad', 'variant', 'build', 'out'].filter((k) => args[k as keyof BisectArgs] !== undefined);
  if (given.length)
    throw new ConfigError(
      `--resume takes its settings from ${STATE_FILE}: drop ${given.map((g) => (g === 'scenario' ? 'the scenario' : `--${g}`)).join(', ')}`,
    );
  const state = readState(args.resume);
  if (!state) throw new ConfigError(`--resume ${args.resume}: no ${STATE_FILE} there (is it a bisect's folder?)`);
  return { settings: state.settings, dir: resolve(args.resume) };
}

export const bisectCommand: CommandModule<object, BisectArgs> = {
  command: 'bisect [scenario]',
  describe:
    "Find the commit of an agent's history that brings an OOM back: git bisect with every step built from the checkout, stormed and judged by the variant's verdict",
  builder: (y: Argv<object>) =>
    y
      .positional('scenario', { type: 'string', describe: 'Scenario YAML file; its named variant runs each build' })
      .option('source', {
        type: 'string',
        describe:
          "A git checkout of the agent (a work tree or a bare repository); only read: steps build in worktrees of a shared clone in the bisect's folder",
      })
      .option('good', { type: 'string', describe: 'A commit (any ref) whose build passes the variant' })
      .option('bad', { type: 'string', describe: 'A later commit whose build fails it' })
      .options(STEP_OPTIONS)
      .option('keep-builds', { type: 'boolean', default: false, describe: "Keep each step's binaries in steps/<n>-<commit>/bin (SPIRE's are ~100 MiB a step)" })
      .option('out', {
        type: 'string',
        describe: "The bisect's folder. Default: reports/bisect-<scenario>-<variant>-<good>-<bad>, so the same command resumes an interrupted bisect",
      })
      .option('resume', { type: 'string', describe: 'Go on with the bisect in this folder, with the settings it records (no other flags)' })
      .example(
        '$0 bisect scenarios/seed-512mi-4x300-releases.yaml --variant v1-15-3 --set expect.v1-15-3.oomKilled=false --source ~/src/spire --good v1.15.2 --bad v1.15.3',
        'The commit between two SPIRE releases after which the agent is OOM-killed again',
      )
      .example(
        '$0 bisect my-agent.yaml --source ~/src/agent --good v2.0 --bad main --build \'make && cp out/attestorm-agent "$ATTESTORM_BIN_DIR"/\'',
        "Another agent, built by its own command into a reference variant's binDir",
      )
      .example('$0 bisect --resume reports/bisect-quick-agent-1a2b3c4d5-6e7f8a9b0', 'Go on after an interrupt or a kill')
      .epilog(EXIT_HELP)
      .strict() as unknown as Argv<BisectArgs>,
  handler: async (args) => {
    const { settings, dir } = await settingsOf(args);
    const builder = builderFor(settings.build);
    await checkBeforeBuilding(specOf(settings), builder);
    const command = ['attestorm', ...process.argv.slice(2)].join(' ');
    const { state, alreadyDone } = await runBisect({ dir, settings, builder, command });
    await runCleanups();
    if (alreadyDone) process.stderr.write(`attestorm: ${dir} holds a finished bisect (remove it, or give --out, to bisect again)\n`);
    process.stderr.write(`bisect ${state.status}: ${dir}/bisect.md, ${dir}/bisect.html\n`);
    if (state.status === 'interrupted') {
      process.exitCode = EXIT.INTERRUPTED;
      return;
    }
    if (!state.outcome) {
      process.exitCode = EXIT.RUN_FAILED;
      return;
    }
    process.stdout.write(`${outcomeSentence(state.outcome)}\n`);
    if (state.outcome.kind === 'candidates') for (const c of state.outcome.commits) process.stdout.write(`  ${c.commit} ${c.subject}\n`);
    process.exitCode = state.outcome.kind === 'first-bad' ? EXIT.OK : EXIT.EXPECTATIONS_FAILED;
  },
};
