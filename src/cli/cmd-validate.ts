// `attestorm validate <scenario..>`: the checks `attestorm run` makes of scenario files before it
// starts anything (schema and rules, every problem at once), without starting anything.
import type { Argv, CommandModule } from 'yargs';
import { readScenarioFile, type LoadedScenario } from '../scenario/index.js';
import { Problems } from './problems.js';

interface ValidateArgs {
  scenario: string[];
}

export const validateCommand: CommandModule<object, ValidateArgs> = {
  command: 'validate <scenario..>',
  describe: 'Check scenario files as attestorm run reads them, starting nothing (exit 2 naming every problem)',
  builder: (y: Argv<object>) =>
    y
      .positional('scenario', { type: 'string', array: true, demandOption: true, describe: 'Scenario YAML file(s)' })
      .example('$0 validate attestorm.yaml', 'Check the scenario attestorm init wrote')
      .epilog('What depends on the machine (root, cgroups, CPUs, a cluster) is checked when the scenario runs.')
      .strict() as unknown as Argv<ValidateArgs>,
  handler: (args) => {
    const problems = new Problems();
    const loaded = args.scenario.map((f) => problems.collect(() => readScenarioFile(f))).filter((l): l is LoadedScenario => l !== undefined);
    problems.throwIfAny();
    for (const { file, scenario } of loaded) {
      process.stdout.write(
        `${file}: scenario ${scenario.name}, variants ${scenario.variants.map((v) => v.name).join(', ')}, ${scenario.duration / 1000} s each\n`,
      );
    }
  },
};
