// `attestorm run`: run scenarios (default scenarios/quick.yaml) against each limiter placement of a
// memory-limited agent and compare. Flags that override scenario keys come from the scenario
// schema's own definitions (overrideKeys), so a flag and its YAML key cannot disagree.
import { join } from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { EXIT } from '../errors.js';
import { overrideKeys, parseOverrides, readScenarioFile, selectVariants, stormLoadDriver, type LoadedScenario } from '../scenario/index.js';
import { runScenario } from '../runner/index.js';
import { firstMissing, handBackOwner, handBackTree, runCleanups } from '../util/index.js';
import { CiSession, TOLERANCE_HELP } from '../ci/index.js';
import { checkCpuBudgetFlag, cpuBudgetOption, startCpuBudget } from './cpu-budget-option.js';
import { choosePlatform, platformFlagProblems, platformOptions, type PlatformArgs } from './platform-option.js';
import { Problems } from './problems.js';
import { wideOption } from './wide-option.js';

interface RunArgs extends PlatformArgs {
  scenario: string[];
  set?: string[];
  out?: string;
  variants?: string;
  placements?: string;
  duration?: string;
  repetitions?: number;
  agentCpus?: string;
  report: boolean;
  baseline?: string;
  tolerance?: string[];
  junit?: string;
  stepSummary?: string;
  cpuBudget?: number;
  wide: boolean;
  requireExpectations?: boolean;
}

const EXIT_HELP = `Exit status:
  ${EXIT.OK}    every variant ran and no expectation failed (inconclusive ones are listed; failOnInconclusive makes them fail), or nothing was judged (verdict compared)
  ${EXIT.EXPECTATIONS_FAILED}    an expectation failed (e.g. pre-attestation was OOM-killed)
  ${EXIT.INVALID_INPUT}    invalid input: bad scenario file or flags, or a machine without what every run needs (sockets in the runtime folder, loopback, a SPIRE binary that runs here); nothing was started
  ${EXIT.RUN_FAILED}    the run could not be carried out (agent did not start, no variant ran)
  ${EXIT.NOT_JUDGED}    no expectation was judged (none written, or all dropped) and --require-expectations / requireExpectations asks for one
  ${EXIT.INTERRUPTED}  interrupted (SIGINT): everything reaped, results.json says "interrupted", data kept`;

// Worst status wins across several scenarios.
const SEVERITY = [EXIT.OK, EXIT.NOT_JUDGED, EXIT.EXPECTATIONS_FAILED, EXIT.INVALID_INPUT, EXIT.RUN_FAILED, EXIT.INTERRUPTED];
const worse = (a: number, b: number) => (SEVERITY.indexOf(b as never) > SEVERITY.indexOf(a as never) ? b : a);

export const runCommand: CommandModule<object, RunArgs> = {
  command: 'run [scenario..]',
  describe: 'Storm a memory-limited agent once per variant (agent configuration) and compare memory, OOM kills and rates',
  builder: (y: Argv<object>) =>
    y
      .positional('scenario', { type: 'string', array: true, default: ['scenarios/quick.yaml'], describe: 'Scenario YAML file(s)' })
      .option('out', {
        type: 'string',
        describe: 'Run folder. Default: reports/<scenario>-<timestamp>/ (reports/latest links to it); with several scenarios, <out>/<name>',
      })
      .option('variants', {
        type: 'string',
        describe: "Comma-separated subset of the scenario's variants to run (expectations about the others are dropped and listed). Default: all",
      })
      .option('cluster', platformOptions.cluster)
      .option('context', platformOptions.context)
      .option('kubeconfig', platformOptions.kubeconfig)
      .option('placements', { type: 'string', describe: 'Alias of --variants (with the placements shorthand, variants are named after placements)' })
      .option('duration', { type: 'string', describe: `${overrideKeys.duration.description} (e.g. 30s, 2m). Default: the scenario's` })
      .option('repetitions', { type: 'number', describe: `${overrideKeys.repetitions.description}. Default: the scenario's` })
      .option('agent-cpus', {
        type: 'string',
        describe: `${overrideKeys.isolation.description}; the runner and pods get the other CPUs (sets the scenario's isolation). Default: the scenario's isolation, none`,
      })
      .option('set', {
        type: 'string',
        array: true,
        describe:
          'Set a scenario key before it is checked: key.path=value, a variant addressed by its name (variants.<name>.agent.binDir=/opt/spire/1.15.3, agent.memoryLimit=8Gi); repeatable. Default: none',
      })
      .option('require-expectations', {
        type: 'boolean',
        describe: `Exit ${EXIT.NOT_JUDGED} when the run judged no expectation (none written, or every one dropped): sets the scenario's requireExpectations. Default: the scenario's, false`,
      })
      .option('cpu-budget', cpuBudgetOption)
      .option('wide', wideOption)
      .option('report', { type: 'boolean', default: true, describe: 'Render report.html / summary.md into the run folder at the end (--no-report to skip)' })
      .option('baseline', {
        type: 'string',
        describe:
          'Run folder or results.json of an earlier run of the same scenario: exit 1 when a figure regressed beyond its tolerance (improvements never fail)',
      })
      .option('tolerance', { type: 'string', array: true, describe: `With --baseline. ${TOLERANCE_HELP}` })
      .option('junit', { type: 'string', describe: 'Write JUnit XML here: a suite per variant, a case per expectation and per baseline figure' })
      .option('step-summary', { type: 'string', describe: 'Append a Markdown summary here (default: $GITHUB_STEP_SUMMARY when set), kept under 1 MiB' })
      .example(
        '$0 run scenarios/quick.yaml --baseline runs/main --tolerance 10% --tolerance peakMemory=5% --junit junit.xml',
        'Gate against a stored run in CI (exit 1 on a regression)',
      )
      .example('$0 run', 'Run scenarios/quick.yaml (what `npm start` does)')
      .example('$0 run scenarios/scaled-256mi-4x300.yaml --variants pre-attestation,disabled --duration 60s', 'Two variants, one minute each')
      .example('$0 run scenarios/quick.yaml --out /tmp/q --repetitions 3', 'Three repetitions into /tmp/q')
      .example('$0 run --wide 2>&1 | less -S', 'Every column of the closing table, scrolled sideways')
      .example(
        '$0 run scenarios/spire-releases.yaml --set variants.v1-15-3.agent.binDir=/opt/spire/1.15.3 --set agent.memoryLimit=8Gi',
        "One release's folder given on the command line, every variant without a memory limit to speak of",
      )
      .example('$0 run scenarios/seed-128mi-4x100.yaml --agent-cpus 1 --duration 20s', 'The agent alone on CPU 1, everything else on the other CPUs')
      .epilog(EXIT_HELP)
      .strict() as unknown as Argv<RunArgs>,
  handler: async (args) => {
    // Every problem of every flag and file at once, before anything starts (ConfigError → exit 2).
    const problems = new Problems();
    const overrides =
      problems.collect(() =>
        parseOverrides({
          duration: args.duration,
          repetitions: args.repetitions,
          isolation: args.agentCpus === undefined ? undefined : { agentCpus: args.agentCpus },
        }),
      ) ?? {};
    if (args.variants !== undefined && args.placements !== undefined) problems.add('--variants and --placements are the same flag: give one');
    const subset = (args.variants ?? args.placements)
      ?.split(',')
      .map((p) => p.trim())
      .filter(Boolean);
    if (subset && !subset.length) problems.add('--variants must name at least one variant, got an empty list');
    const loaded: Array<LoadedScenario & { dropped: string[] }> = [];
    for (const f of args.scenario) {
      const sets = [...(args.set ?? []), ...(args.requireExpectations === undefined ? [] : [`requireExpectations=${args.requireExpectations}`])];
      const l = problems.collect(() => readScenarioFile(f, overrides, sets));
      if (!l) continue;
      if (!subset?.length) {
        loaded.push({ ...l, dropped: [] });
        continue;
      }
      const picked = problems.collect(() => selectVariants(l.scenario, subset));
      if (picked) loaded.push({ ...l, scenario: picked.scenario, dropped: picked.dropped });
    }
    problems.collect(() => checkCpuBudgetFlag(args.cpuBudget));
    const where = choosePlatform(args);
    problems.add(...platformFlagProblems(where, { cpuBudget: args.cpuBudget }));
    problems.add(...where.problems(loaded));
    problems.throwIfAny();
    // A cluster is checked (context, API server) before anything is applied; failures exit 3.
    const platform = await where.open();
    for (const l of loaded) stormLoadDriver.validate(l.scenario, platform.loadSite);
    // CI flags too: the baseline is read and checked against each scenario here.
    const ci = CiSession.fromFlags(
      { baseline: args.baseline, tolerance: args.tolerance, junit: args.junit, stepSummary: args.stepSummary },
      loaded.map((l) => l.scenario.name),
    );

    // CI files a root run writes for a user go to that user at the end (hand-back.ts).
    const ciFiles = [args.junit, args.stepSummary].filter((f): f is string => !!f).map((f) => ({ path: firstMissing(f) ?? f, owner: handBackOwner(f) }));
    const cpuBudget = startCpuBudget(args.cpuBudget);
    let code: number = EXIT.OK;
    for (const l of loaded) {
      const outDir = args.out === undefined ? undefined : loaded.length > 1 ? join(args.out, l.scenario.name) : args.out;
      const command = ['attestorm', 'run', l.file ?? '', ...process.argv.slice(3).filter((a) => !args.scenario.includes(a))].join(' ');
      // A baseline comparison goes into results.json and the reports as the run completes.
      const outcome = await runScenario({
        loaded: l,
        load: stormLoadDriver,
        command,
        render: args.report,
        wide: args.wide,
        droppedExpectations: l.dropped,
        cpuBudget,
        platform,
        complete: (r) => ci.complete(r),
        ...(outDir ? { outDir } : {}),
      });
      code = worse(code, outcome.exitCode);
      code = worse(code, await ci.afterRun(outcome));
      if (code === EXIT.INTERRUPTED) break;
    }
    await runCleanups();
    for (const f of ciFiles) handBackTree(f.path, f.owner);
    process.exitCode = code;
    // An interrupt ends the process from the reaper's signal handler with 130; this covers the rest.
  },
};
