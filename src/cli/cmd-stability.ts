// `attestorm stability`: runs one scenario N times in a row and says how often its verdict held,
// with the spread of every variant's peak and OOM kills — the figure a CI gate's users need before
// they trust it.
import { join } from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import type { RunResults } from '../contract/index.js';
import { ConfigError, EXIT } from '../errors.js';
import { Progress, range, readScenarioFile, stormLoadDriver } from '../scenario/index.js';
import { runScenario } from '../runner/index.js';
import { formatMiB, runCleanups } from '../util/index.js';
import { checkCpuBudgetFlag, cpuBudgetOption, startCpuBudget } from './cpu-budget-option.js';
import { checkCpuHogFlag, cpuHogOption, startCpuHog } from './cpu-hog.js';
import { choosePlatform, platformFlagProblems, platformOptions, type PlatformArgs } from './platform-option.js';
import { Problems } from './problems.js';
import { wideOption } from './wide-option.js';

interface StabilityArgs extends PlatformArgs {
  scenario: string;
  runs: number;
  out: string;
  cpuBudget?: number;
  cpuHog?: number;
  wide: boolean;
}

/** Pass count, verdicts and spreads over finished runs (a pure function, for tests and the CLI). */
export function stabilitySummary(runs: Array<{ results: RunResults; seconds: number }>): string {
  const n = runs.length;
  const count = (v: string) => runs.filter((r) => r.results.verdict === v).length;
  const lines = [`${count('passed')}/${n} passed, ${count('failed')} failed, ${count('inconclusive')} inconclusive`];
  const secs = range(runs.map((r) => r.seconds));
  if (secs) lines.push(`wall clock per run: median ${secs.median.toFixed(0)} s, ${secs.min.toFixed(0)}–${secs.max.toFixed(0)} s`);
  const budget = runs[0]?.results.environment.cpuBudget;
  if (budget) lines.push(`CPU budget ${budget.cores} cores`);
  const busy = range(runs.flatMap((r) => r.results.variants.flatMap((v) => (v.storm?.machineBusyCores != null ? [v.storm.machineBusyCores] : []))));
  const load = range(runs.flatMap((r) => r.results.variants.flatMap((v) => (v.storm?.loadAverage != null ? [v.storm.loadAverage] : []))));
  if (busy && load)
    lines.push(
      `machine during the storms: busy cores median ${busy.median.toFixed(2)} (${busy.min.toFixed(2)}–${busy.max.toFixed(2)}), load average median ${load.median.toFixed(1)} (${load.min.toFixed(1)}–${load.max.toFixed(1)})`,
    );
  const names = [...new Set(runs.flatMap((r) => r.results.variants.map((v) => v.name)))];
  for (const name of names) {
    const vs = runs.map((r) => r.results.variants.find((v) => v.name === name)).filter((v) => v !== undefined);
    const peak = range(vs.flatMap((v) => (v.peakMemoryBytes === null ? [] : [v.peakMemoryBytes]))) ?? { min: 0, median: 0, max: 0 };
    const killed = vs.filter((v) => v.oomKills > 0).length;
    const failed = vs
      .filter((v) => v.verdict === 'failed')
      .map((v) =>
        v.expectations
          .filter((e) => e.verdict === 'failed')
          .map((e) => e.message)
          .join('; '),
      );
    const inconclusive = vs
      .filter((v) => v.verdict === 'inconclusive')
      .map((v) =>
        v.expectations
          .filter((e) => e.verdict === 'inconclusive')
          .map((e) => e.message)
          .join('; '),
      );
    const offered = range(vs.flatMap((v) => (v.storm ? [v.storm.offeredRps] : [])));
    const okRps = range(vs.map((v) => v.okRps));
    lines.push(
      `${name}: peak median ${formatMiB(peak.median)} (${formatMiB(peak.min)}–${formatMiB(peak.max)}), OOM-killed in ${killed}/${vs.length}` +
        (offered ? `, storm offered median ${offered.median.toFixed(0)}/s (${offered.min.toFixed(0)}–${offered.max.toFixed(0)})` : '') +
        (okRps ? `, ok median ${okRps.median.toFixed(1)}/s (${okRps.min.toFixed(1)}–${okRps.max.toFixed(1)})` : '') +
        (failed.length ? `, failed ${failed.length}×: ${failed.join(' | ')}` : '') +
        (inconclusive.length ? `, inconclusive ${inconclusive.length}×: ${inconclusive.join(' | ')}` : ''),
    );
  }
  return `${lines.join('\n')}\n`;
}

export const stabilityCommand: CommandModule<object, StabilityArgs> = {
  command: 'stability [scenario]',
  describe: "Run one scenario N times and report how often its verdict held, with the spread of each variant's peak",
  builder: (y: Argv<object>) =>
    y
      .positional('scenario', { type: 'string', default: 'scenarios/quick.yaml', describe: 'Scenario YAML file' })
      .option('runs', { type: 'number', default: 5, describe: 'How many runs, one after the other' })
      .option('out', {
        type: 'string',
        default: join(
          'reports',
          `stability-${new Date()
            .toISOString()
            .replace(/[-:]/g, '')
            .replace(/\.\d+Z$/, 'Z')}`,
        ),
        describe: 'Folder for the run folders (run-1, run-2, …)',
      })
      .option('cpu-budget', cpuBudgetOption)
      .option('cpu-hog', cpuHogOption)
      .option('wide', wideOption)
      .option('cluster', platformOptions.cluster)
      .option('context', platformOptions.context)
      .option('kubeconfig', platformOptions.kubeconfig)
      .example('$0 stability --runs 20', 'the default comparison 20 times: pass count and spread')
      .example('$0 stability --runs 20 --cpu-budget 1.2', "the same on 1.2 cores' worth of CPU time")
      .example('$0 stability --runs 5 --cpu-hog 0', 'beside a neighbour busy on every core at equal priority')
      .strict() as unknown as Argv<StabilityArgs>,
  handler: async (args) => {
    const problems = new Problems();
    if (!Number.isInteger(args.runs) || args.runs < 1) throw new ConfigError(`--runs must be a positive integer, got ${args.runs}`);
    problems.collect(() => checkCpuBudgetFlag(args.cpuBudget));
    problems.collect(() => checkCpuHogFlag(args.cpuHog));
    const where = choosePlatform(args);
    problems.add(...platformFlagProblems(where, { cpuBudget: args.cpuBudget }));
    problems.throwIfAny();
    const loaded = readScenarioFile(args.scenario);
    const platformProblems = where.problems([loaded]);
    if (platformProblems.length) throw new ConfigError(platformProblems);
    const platform = await where.open();
    stormLoadDriver.validate(loaded.scenario, platform.loadSite);
    // The hog first: it is the machine's neighbour, outside the budget's cgroup.
    const stopHog = startCpuHog(args.cpuHog);
    const cpuBudget = startCpuBudget(args.cpuBudget);
    const conditions = [args.cpuBudget !== undefined ? `--cpu-budget ${args.cpuBudget}` : '', args.cpuHog !== undefined ? `--cpu-hog ${args.cpuHog}` : '']
      .filter(Boolean)
      .join(' ');
    const done: Array<{ results: RunResults; seconds: number }> = [];
    let code: number = EXIT.OK;
    for (let i = 1; i <= args.runs; i++) {
      process.stderr.write(`\nstability: run ${i}/${args.runs}\n`);
      const started = Date.now();
      const outcome = await runScenario({
        loaded,
        load: stormLoadDriver,
        outDir: join(args.out, `run-${i}`),
        command: `attestorm stability ${args.scenario} --runs ${args.runs}${conditions ? ` ${conditions}` : ''} (run ${i})`,
        render: false,
        cpuBudget,
        platform,
        progress: new Progress({ tty: false, plainEverySeconds: 10 }),
        wide: args.wide,
      });
      if (outcome.results.status === 'interrupted') {
        code = EXIT.INTERRUPTED;
        break;
      }
      done.push({ results: outcome.results, seconds: (Date.now() - started) / 1000 });
      process.stderr.write(`stability: run ${i}: ${outcome.results.verdict}\n${stabilitySummary(done)}`);
      if (outcome.results.verdict === 'failed' && code === EXIT.OK) code = EXIT.EXPECTATIONS_FAILED;
    }
    process.stdout.write(stabilitySummary(done));
    await stopHog();
    await runCleanups();
    process.exitCode = code;
  },
};
