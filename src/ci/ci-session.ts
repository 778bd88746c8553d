// `attestorm run`'s CI flags (--baseline, --tolerance, --junit, --step-summary): validated before
// anything runs, then applied to each finished run — the baseline comparison put into its results
// before they are written, the console table, the JUnit file and the job summary — and folded into
// the exit code.
import { existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { AttestormError, ConfigError, EXIT } from '../errors.js';
import { RESULTS_SCHEMA_VERSION, type RunResults } from '../contract/index.js';
import { mermaidChartsOf, type ExtraSection } from '../report/index.js';
import { checkBaselineCompatible, compareWithBaseline, type BaselineComparison } from './baseline.js';
import { baselineSection } from './baseline-section.js';
import { baselineTableText } from './baseline-table.js';
import { renderJUnit, type JUnitRun } from './junit.js';
import { readResultsFile, type ResultsFile } from './results-file.js';
import { appendStepSummary, renderStepSummary } from './step-summary.js';
import { parseTolerances, type Tolerances } from './tolerance.js';

export interface CiFlags {
  baseline?: string;
  tolerance?: string | string[];
  junit?: string;
  stepSummary?: string;
}

/** What a finished run hands over (the runner's RunScenarioOutcome satisfies it). */
export interface FinishedRun {
  runDir: string;
  results: unknown;
  exitCode: number;
}

export interface CiSessionOptions {
  env?: NodeJS.ProcessEnv;
  /** Where tables and notes go (default stderr). */
  log?: (text: string) => void;
}

function checkWritableTarget(file: string, flag: string): string {
  const abs = path.resolve(file);
  const dir = path.dirname(abs);
  let ok: boolean;
  try {
    ok = statSync(dir).isDirectory();
  } catch {
    ok = false;
  }
  if (!ok) throw new ConfigError(`${flag} ${file}: folder ${dir} does not exist (create it first)`);
  if (existsSync(abs) && statSync(abs).isDirectory()) throw new ConfigError(`${flag} ${file} is a folder; give a file path`);
  return abs;
}

export class CiSession {
  readonly tolerances: Tolerances;
  readonly junitFile: string | null;
  readonly stepSummaryFile: string | null;
  private readonly baselines = new Map<string, ResultsFile>();
  private readonly junitRuns: JUnitRun[] = [];
  /** Comparisons complete() made, by the results they went into. */
  private readonly compared = new WeakMap<RunResults, BaselineComparison>();
  private readonly log: (text: string) => void;
  private readonly env: NodeJS.ProcessEnv;

  private constructor(flags: CiFlags, scenarioNames: string[], opts: CiSessionOptions) {
    this.env = opts.env ?? process.env;
    this.log = opts.log ?? ((t) => process.stderr.write(t));
    const problems: string[] = [];
    const attempt = <T>(fn: () => T): T | null => {
      try {
        return fn();
      } catch (err) {
        if (err instanceof ConfigError) {
          problems.push(...err.problems);
          return null;
        }
        throw err;
      }
    };
    const hasTolerance = flags.tolerance !== undefined && (Array.isArray(flags.tolerance) ? flags.tolerance.length > 0 : true);
    if (hasTolerance && flags.baseline === undefined)
      problems.push('--tolerance applies to a --baseline comparison; add --baseline <run folder or results.json>');
    this.tolerances = attempt(() => parseTolerances(flags.tolerance)) ?? parseTolerances(undefined);
    if (flags.baseline !== undefined) {
      if (flags.baseline.trim() === '') problems.push('--baseline needs a run folder or a results.json');
      else for (const name of scenarioNames) attempt(() => this.baselines.set(name, resolveBaseline(flags.baseline!, name, scenarioNames.length)));
    }
    this.junitFile = flags.junit === undefined ? null : attempt(() => checkWritableTarget(flags.junit!, '--junit'));
    const summary = flags.stepSummary ?? this.env['GITHUB_STEP_SUMMARY'];
    const summaryFlag = flags.stepSummary !== undefined ? '--step-summary' : 'GITHUB_STEP_SUMMARY';
    this.stepSummaryFile = summary === undefined || summary === '' ? null : attempt(() => checkWritableTarget(summary, summaryFlag));
    if (problems.length > 0) throw new ConfigError(problems);
  }

  /** Validates every CI flag (and reads and checks the baseline) before anything runs; ConfigError otherwise. */
  static fromFlags(flags: CiFlags, scenarioNames: string[], opts: CiSessionOptions = {}): CiSession {
    return new CiSession(flags, scenarioNames, opts);
  }

  get active(): boolean {
    return this.baselines.size > 0 || this.junitFile !== null || this.stepSummaryFile !== null;
  }

  /**
   * Compares a finished run with its scenario's baseline before the runner writes results.json
   * the last time: the comparison goes into `results.baseline`, and the report sections it brings
   * are returned (none without a baseline), so the file is written and the reports rendered once.
   */
  complete(results: RunResults): ExtraSection[] {
    const base = this.baselines.get(results.scenario.name);
    if (!base || results.schemaVersion !== RESULTS_SCHEMA_VERSION) return [];
    const cmp = compareWithBaseline(base.results, results, this.tolerances, { from: base.file });
    results.baseline = cmp as unknown as Record<string, unknown>;
    this.compared.set(results, cmp);
    return [baselineSection(cmp)];
  }

  /**
   * Applies the CI outputs to one finished run and returns its exit code: the run's own, or
   * EXIT.EXPECTATIONS_FAILED when the run passed but a figure regressed. Improvements never fail.
   * A run that complete() did not see (a folder from elsewhere) is compared here and its
   * results.json given the comparison.
   */
  async afterRun(run: FinishedRun): Promise<number> {
    if (!this.active) return run.exitCode;
    const results = run.results as RunResults;
    if (results?.schemaVersion !== RESULTS_SCHEMA_VERSION) {
      this.log(
        `attestorm: the CI outputs need results schemaVersion ${RESULTS_SCHEMA_VERSION}; ${run.runDir} holds ${JSON.stringify(results?.schemaVersion)}\n`,
      );
      return run.exitCode === EXIT.OK ? EXIT.RUN_FAILED : run.exitCode;
    }
    const resultsFile = path.join(run.runDir, 'results.json');
    const base = this.baselines.get(results.scenario.name);
    let cmp: BaselineComparison | null = this.compared.get(results) ?? null;
    if (!cmp && base) {
      cmp = compareWithBaseline(base.results, results, this.tolerances, { from: base.file });
      writeBaselineInto(resultsFile, cmp);
    }
    if (cmp) this.log(`\n${baselineTableText(cmp)}`);
    const artifacts = [{ label: 'results.json', path: resultsFile }];
    for (const name of ['report.html', 'summary.md']) {
      const file = path.join(run.runDir, name);
      if (existsSync(file)) artifacts.push({ label: name, path: file });
    }
    if (this.junitFile) {
      this.junitRuns.push({ results, baseline: cmp, runDir: run.runDir });
      // Rewritten whole after each scenario, so the file always holds every run so far.
      writeFileAtomic(this.junitFile, renderJUnit(this.junitRuns));
      artifacts.push({ label: 'JUnit XML', path: this.junitFile });
      this.log(`JUnit XML: ${this.junitFile}\n`);
    }
    if (this.stepSummaryFile) {
      // The charts come from the samples the reports read; a folder they cannot be read from still gets its table.
      const charts = await mermaidChartsOf(run.runDir).catch((err: Error) => {
        this.log(`attestorm: the job summary goes without charts: ${err.message}\n`);
        return [];
      });
      const md = renderStepSummary({ results, baseline: cmp, runDir: run.runDir, artifacts, charts, env: this.env });
      const res = appendStepSummary(this.stepSummaryFile, md, resultsFile);
      if (res.skipped) this.log(`attestorm: step summary not written: ${res.skipped}\n`);
      else if (res.truncated) this.log(`step summary (cut to fit 1 MiB): ${res.file}\n`);
    }
    if (cmp && cmp.regressed > 0 && run.exitCode === EXIT.OK) return EXIT.EXPECTATIONS_FAILED;
    return run.exitCode;
  }
}

/**
 * The baseline for one scenario: the given run folder or results.json; with several scenarios, the
 * parent folder of an earlier multi-scenario run (<given>/<name>/results.json).
 */
function resolveBaseline(given: string, scenarioName: string, scenarios: number): ResultsFile {
  const nested = path.join(given, scenarioName, 'results.json');
  let found: ResultsFile;
  if (existsSync(nested)) found = readResultsFile(path.join(given, scenarioName), '--baseline');
  else if (scenarios > 1) {
    throw new ConfigError(
      `--baseline ${given}: with several scenarios, give the folder of an earlier run of the same scenarios (it must hold ${scenarioName}/results.json)`,
    );
  } else found = readResultsFile(given, '--baseline');
  checkBaselineCompatible(found.results, scenarioName, given);
  return found;
}

function writeFileAtomic(file: string, content: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, content);
    renameSync(tmp, file);
  } catch (err) {
    throw new AttestormError('ATTESTORM_ERR_IO', `cannot write ${file}: ${(err as Error).message}`, { cause: err });
  }
}

/** Adds `baseline` to the run's results.json as the runner left it (read back, so nothing else changes). */
function writeBaselineInto(resultsFile: string, cmp: BaselineComparison): void {
  let data: Record<string, unknown>;
  try {
    data = JSON.parse(readFileSync(resultsFile, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new AttestormError('ATTESTORM_ERR_IO', `cannot read ${resultsFile} to add the baseline comparison: ${(err as Error).message}`, { cause: err });
  }
  data['baseline'] = cmp;
  writeFileAtomic(resultsFile, `${JSON.stringify(data, null, 2)}\n`);
}
