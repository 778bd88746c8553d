// `attestorm sweep`: "how many workers per pod until a 256 MiB agent dies, per placement?" and "what
// memory limit does this agent need for 300 workers?" in one command.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { ConfigError, EXIT } from '../errors.js';
import { parseOverrides, readScenarioFile } from '../scenario/index.js';
import { parseVary, runSweep, writeSweepReport, type SweepResult } from '../sweep/index.js';
import { runCleanups } from '../util/index.js';
import { choosePlatform, platformOptions, type PlatformArgs } from './platform-option.js';
import { wideOption } from './wide-option.js';

interface SweepArgs extends PlatformArgs {
  scenario: string;
  vary?: string;
  variants?: string;
  duration?: string;
  out?: string;
  'find-oom'?: string;
  resolution?: number;
  report?: string;
  wide: boolean;
}

export const sweepCommand: CommandModule<object, SweepArgs> = {
  command: 'sweep [scenario]',
  describe: 'Run a scenario once per value of one key (or bisect it) and chart peak memory and OOM kills against it, per variant',
  builder: (y: Argv<object>) =>
    y
      .positional('scenario', { type: 'string', default: 'scenarios/quick.yaml', describe: 'Scenario YAML file' })
      .option('vary', { type: 'string', describe: '<key>=<v1>,<v2>,...: the scenario key to vary and its values, e.g. load.workersPerPod=10,20,40' })
      .option('variants', { type: 'string', describe: "Comma-separated subset of the scenario's variants. Default: all" })
      .option('duration', { type: 'string', describe: "Load phase per run (e.g. 20s). Default: the scenario's" })
      .option('out', {
        type: 'string',
        describe: 'Sweep folder (one run folder per value, sweep.json, report.html). Default: reports/sweep-<scenario>-<timestamp>',
      })
      .option('find-oom', {
        type: 'string',
        describe: '<low>..<high>: bisect the --vary key (give it as <key>= with no values) for the value where each variant starts or stops being OOM-killed',
      })
      .option('resolution', {
        type: 'number',
        describe: 'With --find-oom: stop when the interval is this narrow, in the unit of <low> (default: a sixteenth of the range)',
      })
      .option('report', { type: 'string', describe: 'Render report.html of an existing sweep folder again (nothing runs)' })
      .option('wide', wideOption)
      .option('cluster', platformOptions.cluster)
      .option('context', platformOptions.context)
      .option('kubeconfig', platformOptions.kubeconfig)
      .example(
        '$0 sweep scenarios/quick.yaml --vary load.workersPerPod=10,20,40 --variants pre-attestation,disabled',
        'workers per pod until the agent dies, per variant',
      )
      .example(
        '$0 sweep scenarios/quick.yaml --vary agent.memoryLimit= --find-oom 96Mi..512Mi --variants disabled',
        'the memory limit the unlimited agent needs',
      )
      .strict() as unknown as Argv<SweepArgs>,
  handler: async (args) => {
    if (args.report) {
      const file = join(args.report, 'sweep.json');
      if (!existsSync(file)) throw new ConfigError(`--report ${args.report}: no sweep.json there (is it a sweep folder?)`);
      process.stdout.write(`${writeSweepReport(args.report, JSON.parse(readFileSync(file, 'utf8')) as SweepResult)}\n`);
      return;
    }
    if (!args.vary) throw new ConfigError('--vary is required: <key>=<v1>,<v2>,... (or <key>= with --find-oom)');
    const findOom = args['find-oom'];
    const vary = findOom ? { key: args.vary.replace(/=.*$/, ''), values: [] as string[] } : parseVary(args.vary);
    let range: { low: string; high: string; resolution: number } | undefined;
    if (findOom) {
      const m = /^([^.]+)\.\.([^.]+)$/.exec(findOom);
      if (!m) throw new ConfigError(`--find-oom must be <low>..<high>, e.g. 96Mi..512Mi, got ${JSON.stringify(findOom)}`);
      const lowN = Number(/^-?\d+(\.\d+)?/.exec(m[1]!)?.[0]);
      const highN = Number(/^-?\d+(\.\d+)?/.exec(m[2]!)?.[0]);
      range = { low: m[1]!, high: m[2]!, resolution: args.resolution ?? Math.max(1, Math.round((highN - lowN) / 16)) };
    }
    const overrides = parseOverrides({ duration: args.duration });
    const base = readScenarioFile(args.scenario, overrides);
    const stamp = new Date()
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d+Z$/, 'Z');
    const outDir = args.out ?? join('reports', `sweep-${base.scenario.name}-${stamp}`);
    const variants = args.variants
      ?.split(',')
      .map((v) => v.trim())
      .filter(Boolean);
    const where = choosePlatform(args);
    const problems = where.problems([base]);
    if (problems.length) throw new ConfigError(problems);
    const platform = await where.open();
    const result = await runSweep({ base, vary, outDir, platform, wide: args.wide, ...(variants ? { variants } : {}), ...(range ? { findOom: range } : {}) });
    const report = writeSweepReport(outDir, result);
    process.stderr.write(`sweep ${result.status}: ${join(outDir, 'sweep.json')}, ${report}\n`);
    for (const [v, b] of Object.entries(result.boundaries))
      process.stdout.write(
        `${v}: ${b === null ? 'never OOM-killed' : `first OOM-killed at ${result.key}=${b}`}${result.lastKilled[v] && result.lastKilled[v] !== b ? `, last at ${result.lastKilled[v]}` : ''}\n`,
      );
    await runCleanups();
    process.exitCode = result.status === 'complete' ? EXIT.OK : EXIT.INTERRUPTED;
  },
};
