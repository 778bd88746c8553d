// `attestorm run`: run scenarios (default scenarios/quick.yaml) against each limiter placement of a
// memory-limited agent and compare. Flags that override scenario keys come from the scenario
// schema's own definitions (overrideKeys), so a flag and its YAML key cannot disagree.
import { join } from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { readFileSync } from 'node:fs';
import { baselineSectionsOf } from '../ci/index.js';
import { ConfigError, EXIT } from '../errors.js';
import { renderReports } from '../report/index.js';
import { clusterFaultProblems, clusterRunOptions, kindVariant, openCluster, waitForNodeImages } from '../kube/index.js';
import { clusterLayout, isLocalClusterContext, makePlannedSpireImages, planSpireImages, type SpireImagePlan } from '../cluster/index.js';
import { overrideKeys, parseOverrides, readScenarioFile, runScenario, selectVariants, stormLoadDriver, type LoadedScenario } from '../scenario/index.js';
import { runCleanups } from '../util/index.js';
import { CiSession, TOLERANCE_HELP } from '../ci/index.js';
import { checkCpuBudgetFlag, cpuBudgetOption, startCpuBudget } from './cpu-budget-option.js';

interface RunArgs {
  scenario: string[];
  out?: string;
  variants?: string;
  placements?: string;
  cluster?: string;
  context?: string;
  kubeconfig?: string;
  duration?: string;
  repetitions?: number;
  agentCpus?: string;
  report: boolean;
  baseline?: string;
  tolerance?: string[];
  junit?: string;
  stepSummary?: string;
  cpuBudget?: number;
  set?: string[];
}

const EXIT_HELP = `Exit status:
  ${EXIT.OK}    every variant ran and no expectation failed (inconclusive ones are listed; failOnInconclusive makes them fail)
  ${EXIT.EXPECTATIONS_FAILED}    an expectation failed (e.g. pre-attestation was OOM-killed)
  ${EXIT.INVALID_INPUT}    invalid input: bad scenario file or flags (nothing was started)
  ${EXIT.RUN_FAILED}    the run could not be carried out (agent did not start, no variant ran)
  ${EXIT.INTERRUPTED}  interrupted (SIGINT): everything reaped, results.json says "interrupted", data kept`;

// Worst status wins across several scenarios.
const SEVERITY = [EXIT.OK, EXIT.EXPECTATIONS_FAILED, EXIT.INVALID_INPUT, EXIT.RUN_FAILED, EXIT.INTERRUPTED];
const worse = (a: number, b: number) => (SEVERITY.indexOf(b as never) > SEVERITY.indexOf(a as never) ? b : a);

export const runCommand: CommandModule<object, RunArgs> = {
  command: 'run [scenario..]',
  describe: 'Storm a memory-limited agent once per variant (agent configuration) and compare memory, OOM kills and rates',
  builder: (y: Argv<object>) =>
    y
      .positional('scenario', { type: 'string', array: true, default: ['scenarios/quick.yaml'], describe: 'Scenario YAML file(s)' })
      .option('out', { type: 'string', describe: 'Run folder. Default: reports/<scenario>-<timestamp>/ (reports/latest links to it); with several scenarios, <out>/<name>' })
      .option('variants', { type: 'string', describe: 'Comma-separated subset of the scenario\'s variants to run (expectations about the others are dropped and listed). Default: all' })
      .option('cluster', { type: 'string', describe: 'Run every variant in a kind cluster instead of the local sandbox: kind or kind:<name> (default name attestorm; see attestorm kind up)' })
      .option('context', { type: 'string', describe: "Run every variant in the cluster of this kubeconfig context (the agent's memory is read by a memory-sampler pod on its node)" })
      .option('kubeconfig', { type: 'string', describe: 'Kubeconfig file for --cluster/--context. Default: KUBECONFIG, else ~/.kube/config' })
      .option('placements', { type: 'string', describe: 'Alias of --variants (with the placements shorthand, variants are named after placements)' })
      .option('duration', { type: 'string', describe: `${overrideKeys.duration.description} (e.g. 30s, 2m). Default: the scenario's` })
      .option('repetitions', { type: 'number', describe: `${overrideKeys.repetitions.description}. Default: the scenario's` })
      .option('agent-cpus', { type: 'string', describe: `${overrideKeys.isolation.description}; the runner and pods get the other CPUs (sets the scenario's isolation). Default: the scenario's isolation, none` })
      .option('set', { type: 'string', array: true, describe: 'Set a scenario key before it is checked: key.path=value, a variant addressed by its name (variants.<name>.agent.binDir=/opt/spire/1.15.3, agent.memoryLimit=8Gi); repeatable. Default: none' })
      .option('cpu-budget', cpuBudgetOption)
      .option('report', { type: 'boolean', default: true, describe: 'Render report.html / summary.md into the run folder at the end (--no-report to skip)' })
      .option('baseline', { type: 'string', describe: 'Run folder or results.json of an earlier run of the same scenario: exit 1 when a figure regressed beyond its tolerance (improvements never fail)' })
      .option('tolerance', { type: 'string', array: true, describe: `With --baseline. ${TOLERANCE_HELP}` })
      .option('junit', { type: 'string', describe: 'Write JUnit XML here: a suite per variant, a case per expectation and per baseline figure' })
      .option('step-summary', { type: 'string', describe: 'Append a Markdown summary here (default: $GITHUB_STEP_SUMMARY when set), kept under 1 MiB' })
      .example('$0 run scenarios/quick.yaml --baseline runs/main --tolerance 10% --tolerance peakMemory=5% --junit junit.xml', 'Gate against a stored run in CI (exit 1 on a regression)')
      .example('$0 run', 'Run scenarios/quick.yaml (what `npm start` does)')
      .example('$0 run scenarios/scaled-256mi-4x300.yaml --variants pre-attestation,disabled --duration 60s', 'Two variants, one minute each')
      .example('$0 run scenarios/quick.yaml --out /tmp/q --repetitions 3', 'Three repetitions into /tmp/q')
      .example('$0 run scenarios/spire-releases.yaml --set variants.v1-15-3.agent.binDir=/opt/spire/1.15.3 --set agent.memoryLimit=8Gi', 'One release\'s folder given on the command line, every variant without a memory limit to speak of')
      .example('$0 run scenarios/seed-128mi-4x100.yaml --agent-cpus 1 --duration 20s', 'The agent alone on CPU 1, everything else on the other CPUs')
      .epilog(EXIT_HELP)
      .strict() as unknown as Argv<RunArgs>,
  handler: async (args) => {
    // Every scenario and flag is validated before anything starts (ConfigError → exit 2).
    // Every problem of every flag and file at once, before anything starts.
    const problems: string[] = [];
    const collect = <T>(fn: () => T): T | undefined => {
      try {
        return fn();
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        problems.push(...err.problems);
        return undefined;
      }
    };
    const overrides = collect(() => parseOverrides({ duration: args.duration, repetitions: args.repetitions, isolation: args.agentCpus === undefined ? undefined : { agentCpus: args.agentCpus } })) ?? {};
    if (args.variants !== undefined && args.placements !== undefined) problems.push('--variants and --placements are the same flag: give one');
    const subset = (args.variants ?? args.placements)?.split(',').map((p) => p.trim()).filter(Boolean);
    if (subset && !subset.length) problems.push('--variants must name at least one variant, got an empty list');
    const loaded: Array<LoadedScenario & { dropped: string[] }> = [];
    for (const f of args.scenario) {
      const l = collect(() => readScenarioFile(f, overrides, args.set ?? []));
      if (!l) continue;
      if (!subset?.length) {
        loaded.push({ ...l, dropped: [] });
        continue;
      }
      const picked = collect(() => selectVariants(l.scenario, subset));
      if (picked) loaded.push({ ...l, scenario: picked.scenario, dropped: picked.dropped });
    }
    collect(() => checkCpuBudgetFlag(args.cpuBudget));
    if ((args.cluster !== undefined || args.context !== undefined) && args.cpuBudget !== undefined) problems.push('--cpu-budget applies to local runs (the cluster\'s node sets its own CPU): drop it or --cluster/--context');
    let spirePlan: SpireImagePlan | null = null;
    if (args.cluster !== undefined || args.context !== undefined) {
      // Kind mode cannot run an agent that lives on this machine: named before anything starts.
      for (const l of loaded) {
        for (const v of l.scenario.variants) collect(() => kindVariant(v));
        // Faults Kubernetes cannot express here are named, not ignored.
        problems.push(...clusterFaultProblems(l.scenario.faults, `${l.file ?? l.scenario.name}: `));
      }
      // SPIRE variants on the local cluster run images made from the user's binaries (it cannot pull).
      const context = args.context !== undefined ? `context ${args.context}` : `--cluster ${args.cluster}`;
      spirePlan = planSpireImages(loaded.flatMap((l) => l.scenario.variants), { localCluster: args.context !== undefined && isLocalClusterContext(args.context), context });
      problems.push(...spirePlan.problems);
    }
    if (problems.length) throw new ConfigError(problems);
    // The cluster is checked (context, API server) before anything is applied; failures exit 3.
    const cluster = args.cluster !== undefined || args.context !== undefined ? await openCluster({ ...(args.cluster ? { cluster: args.cluster } : {}), ...(args.context ? { context: args.context } : {}), ...(args.kubeconfig ? { kubeconfig: args.kubeconfig } : {}) }) : null;
    if (cluster?.note) process.stderr.write(`attestorm: ${cluster.note}\n`);
    const spireImages = spirePlan?.binDirs.size ? await makePlannedSpireImages(clusterLayout(), spirePlan, (m) => process.stderr.write(`attestorm: ${m}\n`)) : new Map();
    if (cluster && spireImages.size) await waitForNodeImages(cluster.kc, [...spireImages.values()].flatMap((p) => [p.serverImage, p.agentImage]));
    for (const l of loaded) stormLoadDriver.validate(l.scenario, cluster ? 'cluster' : 'local');
    // CI flags too: the baseline is read and checked against each scenario here.
    const ci = CiSession.fromFlags(
      { baseline: args.baseline, tolerance: args.tolerance, junit: args.junit, stepSummary: args.stepSummary },
      loaded.map((l) => l.scenario.name),
    );

    const cpuBudget = startCpuBudget(args.cpuBudget);
    let code: number = EXIT.OK;
    for (const l of loaded) {
      const outDir = args.out === undefined ? undefined : loaded.length > 1 ? join(args.out, l.scenario.name) : args.out;
      const command = ['attestorm', 'run', l.file ?? '', ...process.argv.slice(3).filter((a) => !args.scenario.includes(a))].join(' ');
      const inCluster = cluster ? clusterRunOptions(cluster, spireImages) : {};
      const outcome = await runScenario({ loaded: l, load: stormLoadDriver, command, render: args.report, droppedExpectations: l.dropped, cpuBudget, ...(outDir ? { outDir } : {}), ...inCluster });
      code = worse(code, outcome.exitCode);
      code = worse(code, ci.afterRun(outcome));
      // A baseline comparison joins report.html and summary.md: render them again with it.
      const sections = baselineSectionsOf(JSON.parse(readFileSync(join(outcome.runDir, 'results.json'), 'utf8')) as { baseline?: unknown });
      if (args.report && sections.length && outcome.results.status !== 'interrupted') await renderReports(outcome.runDir, { extraSections: sections });
      if (code === EXIT.INTERRUPTED) break;
    }
    await runCleanups();
    process.exitCode = code;
    // An interrupt ends the process from the reaper's signal handler with 130; this covers the rest.
  },
};
