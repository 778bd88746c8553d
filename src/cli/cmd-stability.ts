// `attestorm stability`: runs one scenario N times in a row and says how often its verdict held,
// with the spread of every variant's peak and OOM kills — the figure a CI gate's users need before
// they trust it.
import { join } from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import type { RunResults } from '../contract/index.js';
import { ConfigError, EXIT } from '../errors.js';
import { Progress, range, readScenarioFile, runScenario, stormLoadDriver } from '../scenario/index.js';
import { formatMiB, runCleanups } from '../util/index.js';

interface StabilityArgs {
  scenario: string;
  runs: number;
  out: string;
}

/** Pass count, verdicts and spreads over finished runs (a pure function, for tests and the CLI). */
export function stabilitySummary(runs: Array<{ results: RunResults; seconds: number }>): string {
  const n = runs.length;
  const count = (v: string) => runs.filter((r) => r.results.verdict === v).length;
  const lines = [`${count('passed')}/${n} passed, ${count('failed')} failed, ${count('inconclusive')} inconclusive`];
  const secs = range(runs.map((r) => r.seconds));
  if (secs) lines.push(`wall clock per run: median ${secs.median.toFixed(0)} s, ${secs.min.toFixed(0)}–${secs.max.toFixed(0)} s`);
  const names = [...new Set(runs.flatMap((r) => r.results.variants.map((v) => v.name)))];
  for (const name of names) {
    const vs = runs.map((r) => r.results.variants.find((v) => v.name === name)).filter((v) => v !== undefined);
    const peak = range(vs.flatMap((v) => (v.peakMemoryBytes === null ? [] : [v.peakMemoryBytes]))) ?? { min: 0, median: 0, max: 0 };
    const killed = vs.filter((v) => v.oomKills > 0).length;
    const failed = vs.filter((v) => v.verdict === 'failed').map((v) => v.expectations.filter((e) => e.verdict === 'failed').map((e) => e.message).join('; '));
    lines.push(
      `${name}: peak median ${formatMiB(peak.median)} (${formatMiB(peak.min)}–${formatMiB(peak.max)}), OOM-killed in ${killed}/${vs.length}` +
        (failed.length ? `, failed ${failed.length}×: ${failed.join(' | ')}` : ''),
    );
  }
  return `${lines.join('\n')}\n`;
}

export const stabilityCommand: CommandModule<object, StabilityArgs> = {
  command: 'stability [scenario]',
  describe: 'Run one scenario N times and report how often its verdict held, with the spread of each variant\'s peak',
  builder: (y: Argv<object>) =>
    y
      .positional('scenario', { type: 'string', default: 'scenarios/quick.yaml', describe: 'Scenario YAML file' })
      .option('runs', { type: 'number', default: 5, describe: 'How many runs, one after the other' })
      .option('out', { type: 'string', default: join('reports', `stability-${new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}`), describe: 'Folder for the run folders (run-1, run-2, …)' })
      .example('$0 stability --runs 20', 'the default comparison 20 times: pass count and spread')
      .strict() as unknown as Argv<StabilityArgs>,
  handler: async (args) => {
    if (!Number.isInteger(args.runs) || args.runs < 1) throw new ConfigError(`--runs must be a positive integer, got ${args.runs}`);
    const loaded = readScenarioFile(args.scenario);
    stormLoadDriver.validate(loaded.scenario);
    const done: Array<{ results: RunResults; seconds: number }> = [];
    let code: number = EXIT.OK;
    for (let i = 1; i <= args.runs; i++) {
      process.stderr.write(`\nstability: run ${i}/${args.runs}\n`);
      const started = Date.now();
      const outcome = await runScenario({
        loaded,
        load: stormLoadDriver,
        outDir: join(args.out, `run-${i}`),
        command: `attestorm stability ${args.scenario} --runs ${args.runs} (run ${i})`,
        render: false,
        progress: new Progress({ tty: false, plainEverySeconds: 10 }),
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
    await runCleanups();
    process.exitCode = code;
  },
};
