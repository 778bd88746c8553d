// `attestorm run` for one scenario: every repetition × variant under identical load, on one
// platform (this machine, or a cluster). results.json says `running` (with the runner's pid) from
// the first moment, is rewritten after each variant run, and ends `complete`, `interrupted` or
// `failed`; expectations are judged at the end.
import { basename, dirname, join, relative } from 'node:path';
import { throttledSeconds, type CpuBudget } from '../cgroup/index.js';
import { MEASURE_WORDS, peakIn, type MemoryMeasure, type RunResults } from '../contract/index.js';
import { ConfigError, EXIT } from '../errors.js';
import { localPlatform, RunEndingFailure, type Platform, type PlatformRun, type RepetitionContext } from '../platform/index.js';
import { renderReports, type ExtraSection } from '../report/index.js';
import { newRunId } from '../sandbox/index.js';
import {
  comparisonTable,
  createRunDir,
  defaultRunDir,
  linkLatest,
  preflightVariants,
  Progress,
  writeResults,
  writeScenarioCopy,
  type LoadDriver,
  type LoadedScenario,
  type RepMeasurement,
  type Scenario,
} from '../scenario/index.js';
import { firstMissing, formatMiB, handBackOwner, handBackTree, onCleanup, onInterrupt, terminalColumns, wrapText, type OsOwner } from '../util/index.js';
import { concludeResults, startRunResults, VariantTally } from './run-results.js';

export interface RunScenarioOptions {
  loaded: LoadedScenario;
  load: LoadDriver;
  /** Run folder; default reports/<scenario>-<timestamp>. */
  outDir?: string;
  /** The command line that reproduces the run (recorded in results.json). */
  command: string;
  progress?: Progress;
  /** Render the HTML/Markdown reports at the end (default true). */
  render?: boolean;
  /** Where the comparison table goes (default stderr); it is laid out for the stream's width (terminalColumns). */
  tableStream?: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  /** Every column of the comparison table, not only the essential ones (--wide). */
  wide?: boolean;
  /** Expectations dropped because only some variants run (recorded and printed). */
  droppedExpectations?: string[];
  /** The CPU quota the whole run is under (--cpu-budget), recorded in results.json; null/absent = none. */
  cpuBudget?: CpuBudget | null;
  /** Where the repetitions run. Default: this machine (localPlatform). */
  platform?: Platform;
  /**
   * Last additions to the finished results before they are written complete (a baseline
   * comparison), returning the report sections they bring: results.json is written, and the
   * reports rendered, once.
   */
  complete?(results: RunResults): ExtraSection[];
}

export interface RunScenarioOutcome {
  runDir: string;
  results: RunResults;
  exitCode: number;
}

/** Exit status of a finished run: interrupted, not carried out, expectations failed, nothing judged (when required), or ok. */
export function exitCodeOf(results: RunResults): number {
  if (results.status === 'interrupted' || results.status === 'incomplete') return EXIT.INTERRUPTED;
  if (results.status === 'failed') return EXIT.RUN_FAILED;
  // A comparison (no rule judged) is not a failure, unless the scenario or --require-expectations asks that something be judged.
  if (results.verdict === 'compared') return (results.scenario.resolved as { requireExpectations?: boolean }).requireExpectations ? EXIT.NOT_JUDGED : EXIT.OK;
  return results.passed ? EXIT.OK : EXIT.EXPECTATIONS_FAILED;
}

/** One scenario run while it goes: its folder, results and what must be undone at the end. */
interface ScenarioRun {
  s: Scenario;
  /** The run on its platform: its repetitions, and what it made there, removed at the end. */
  platform: PlatformRun;
  runDir: string;
  runId: string;
  results: RunResults;
  tally: VariantTally;
  abort: AbortController;
  interrupted: boolean;
  /** Why the run ended before its last variant (a cluster's node or engine went away); null while it goes on. */
  failure: string | null;
  throttledAtStart: number | null;
  /** What this run creates in the user's space (the run folder, or a parent it made) and who it goes to (hand-back.ts). */
  handBack: { path: string; owner: OsOwner | null };
}

export async function runScenario(opts: RunScenarioOptions): Promise<RunScenarioOutcome> {
  const run = await openRun(opts);
  const { s, runDir, results, abort } = run;
  startPlatform(run);
  const offInterrupt = onInterrupt(() => {
    run.interrupted = true;
    abort.abort();
    // Said at once: a second signal ends the process without waiting for the summary written below,
    // and the folder must not go on saying "running".
    results.status = 'interrupted';
    results.statusDetail = 'interrupted; the variants had not been summarized when the process ended (their samples are in the run folder)';
    writeResults(runDir, results);
  });
  let finish: () => void = () => {};
  const finished = new Promise<void>((r) => (finish = r));
  // On SIGINT the reaper awaits this: the main flow stops the load, reaps, and writes the results.
  // The abort reaches every wait (agent starts and restarts included), so this is a ceiling only.
  const offCleanup = onCleanup(async () => {
    abort.abort();
    await Promise.race([finished, new Promise((r) => setTimeout(r, 90_000).unref())]);
  });
  const progress = opts.progress ?? new Progress();
  try {
    await runRepetitions(run, opts, progress);
  } catch (err) {
    // Not left saying running: what ran is summarized, and the error that ended it said.
    results.variants = run.tally.summarize();
    concludeResults(results, s, run.interrupted, `the run ended: ${(err as Error).message}`);
    writeResults(runDir, results);
    throw err;
  } finally {
    progress.stop();
    offInterrupt();
    await run.platform.close();
  }

  results.variants = run.tally.summarize();
  if (opts.cpuBudget && results.environment.cpuBudget) {
    const end = throttledSeconds(opts.cpuBudget);
    results.environment.cpuBudget.throttledSeconds = end === null || run.throttledAtStart === null ? null : +(end - run.throttledAtStart).toFixed(2);
  }
  concludeResults(results, s, run.interrupted, run.failure);
  const sections = opts.complete?.(results) ?? [];
  writeResults(runDir, results);
  finish();
  offCleanup();
  await reportRun(run, opts, sections);
  handBackRun(run);
  return { runDir, results, exitCode: exitCodeOf(results) };
}

/** Every check, then the run folder and results.json (status running): nothing has started yet. */
async function openRun(opts: RunScenarioOptions): Promise<ScenarioRun> {
  const platform = opts.platform ?? localPlatform;
  // The generator's own rules, and whether the platform can run every variant and fault.
  opts.load.validate(opts.loaded.scenario, platform.loadSite);
  const problems = platform.problems(opts.loaded.scenario);
  if (problems.length) throw new ConfigError([...new Set(problems)]);
  // What every run needs of the machine, and what each variant's kind needs (a SPIRE variant's
  // binaries, run once); all failures at once (exit 2), variants without binaries skipped.
  const machine = await platform.checkMachine(opts.loaded.scenario);
  const preflight = await preflightVariants(opts.loaded.scenario, process.env, machine);
  const s = preflight.scenario;
  const prepared = await platform.prepare(s);
  const runId = newRunId(s.name.slice(0, 20));
  const platformRun = prepared.open(runId);
  const throttledAtStart = opts.cpuBudget ? throttledSeconds(opts.cpuBudget) : null;
  const wanted = opts.outDir ?? defaultRunDir(s.name);
  const handBack = { path: firstMissing(wanted) ?? wanted, owner: handBackOwner(wanted) };
  const runDir = createRunDir(wanted);
  linkLatest(runDir);
  writeScenarioCopy(runDir, s);

  const results = startRunResults({
    loaded: { ...opts.loaded, scenario: s },
    command: opts.command,
    platform: platform.record,
    measurement: prepared.measurement,
    isolation: prepared.isolation,
    cpuBudgetCores: opts.cpuBudget ? opts.cpuBudget.cores : null,
    droppedExpectations: [...(opts.droppedExpectations ?? []), ...preflight.dropped],
    skipped: preflight.skipped,
  });
  for (const k of preflight.skipped) process.stderr.write(`attestorm: variant ${k.name} skipped: ${k.reason}\n`);
  for (const d of results.droppedExpectations) process.stderr.write(`attestorm: expectation dropped (variant subset): ${d}\n`);
  if (prepared.isolation && !prepared.isolation.applied) process.stderr.write(`attestorm: CPU isolation ${prepared.isolation.detail}\n`);
  writeResults(runDir, results);
  return {
    s,
    platform: platformRun,
    runDir,
    runId,
    results,
    tally: new VariantTally(s, opts.load, runDir),
    abort: new AbortController(),
    interrupted: false,
    failure: null,
    throttledAtStart,
    handBack,
  };
}

/** The run started on its platform; an isolation that could not be applied is said and recorded, and the run goes on. */
function startPlatform(run: ScenarioRun): void {
  const notApplied = run.platform.start();
  if (!notApplied) return;
  run.results.environment.isolation = notApplied;
  process.stderr.write(`attestorm: CPU isolation ${notApplied.detail}\n`);
  writeResults(run.runDir, run.results);
}

/** Every repetition of every variant, in turn; results.json is rewritten after each. */
async function runRepetitions(run: ScenarioRun, opts: RunScenarioOptions, progress: Progress): Promise<void> {
  const { s, results } = run;
  for (let rep = 1; rep <= s.repetitions; rep++) {
    for (const variant of s.variants) {
      if (run.abort.signal.aborted) return;
      progress.placementStart(s.repetitions > 1 ? `${variant.name} (rep ${rep}/${s.repetitions})` : variant.name, s.duration);
      const m = await runOne(run, {
        scenario: s,
        variant,
        runDir: run.runDir,
        runId: run.runId,
        rep,
        load: opts.load,
        signal: run.abort.signal,
        onSample: (line) => progress.onSample(line),
        onDescribe: (agent) => run.tally.describe(variant.name, agent),
        onEnvironment: (patch) => Object.assign(results.environment, patch),
        onPlatform: (detail) => {
          const platform = results.platform!;
          results.platform = { ...platform, detail: { ...platform.detail, ...detail } };
        },
      });
      run.tally.add(variant.name, m);
      progress.placementEnd(repetitionLine(m, s.memoryMeasure));
      results.variants = run.tally.summarize();
      writeResults(run.runDir, results);
      if (run.failure) return;
    }
  }
}

/** One repetition; a failure that ends the run is kept as its reason, with what the repetition measured until then. */
async function runOne(run: ScenarioRun, ctx: RepetitionContext): Promise<RepMeasurement> {
  try {
    return await run.platform.runRepetition(ctx);
  } catch (err) {
    if (!(err instanceof RunEndingFailure)) throw err;
    run.failure = `the run ended in variant ${ctx.variant.name}${ctx.scenario.repetitions > 1 ? ` (rep ${ctx.rep})` : ''}: ${err.message}`;
    return err.measurement;
  }
}

function repetitionLine(m: RepMeasurement, measure: MemoryMeasure): string {
  if (m.error) return `failed: ${m.error}`;
  if (m.notJudged) return `not judged: ${m.notJudged}`;
  const p = peakIn(m.peaks, measure);
  const usage = measure !== 'usage' && m.peaks.usageBytes !== null ? ` (usage ${formatMiB(m.peaks.usageBytes)})` : '';
  return `peak ${MEASURE_WORDS[measure]} ${p === null ? 'unmeasured' : formatMiB(p)}${usage} of ${formatMiB(m.memoryLimitBytes, 0)}, OOM kills ${m.oomKills}, restarts ${m.restarts}, ok ${(m.counts.ok / Math.max(1, m.loadSeconds)).toFixed(1)}/s`;
}

/** A root run's files in the user's space (run folder, reports, reports/latest) handed to the user (sudo caller, folder owner). */
function handBackRun(run: ScenarioRun): void {
  const { path, owner } = run.handBack;
  try {
    handBackTree(path, owner);
    handBackTree(join(dirname(run.runDir), 'latest'), owner);
  } catch (err) {
    process.stderr.write(`attestorm: cannot hand ${path} back to uid ${owner?.uid}: ${(err as Error).message}\n`);
  }
}

/** A path as the user can type it: relative to the working folder when inside it. */
function shown(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') ? rel : path;
}

/** The comparison table, and the reports rendered from the finished results.json, laid out for the console's width. */
async function reportRun(run: ScenarioRun, opts: RunScenarioOptions, extraSections: ExtraSection[]): Promise<void> {
  const { s, runDir, results } = run;
  const out = opts.tableStream ?? process.stderr;
  const width = terminalColumns(out);
  const say = (text: string) => out.write(`${wrapText(text, width, '', '  ').join('\n')}\n`);
  out.write('\n');
  say(`${s.name}: ${results.status}, verdict ${results.verdict}; results in ${shown(runDir)}`);
  out.write(comparisonTable(results, { width, wide: opts.wide === true }));
  for (const k of results.skippedVariants ?? []) say(`skipped: ${k.name} (${k.reason})`);
  if (opts.render !== false && !run.interrupted) {
    try {
      const { files } = await renderReports(runDir, extraSections.length ? { extraSections } : {});
      say(`reports in ${shown(runDir)}: ${files.map((f) => (f.startsWith(runDir) ? basename(f) : shown(f))).join(', ')}`);
    } catch (err) {
      process.stderr.write(
        `attestorm: rendering the reports failed (the data is complete; retry with attestorm report ${runDir}): ${(err as Error).message}\n`,
      );
    }
  }
  if (run.failure) process.stderr.write(`attestorm: ${results.statusDetail}\n`);
  const allFailed = results.variants.length > 0 && results.variants.every((p) => !!p.error);
  if (allFailed && !run.failure)
    process.stderr.write(`attestorm: no variant could be run: ${results.variants.map((p) => `${p.name}: ${p.error}`).join('; ')}\n`);
}
