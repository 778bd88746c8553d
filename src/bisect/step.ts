// One step: build a commit's work tree into the step's folder (or take a folder already built),
// run the scenario's named variant on that build through the runner `attestorm run` uses, and
// judge it. The same for `attestorm bisect` (in a worktree it made) and `attestorm bisect-step`
// (in the tree `git bisect run` checked out).
import { mkdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { AttestormError } from '../errors.js';
import { runScenario } from '../runner/index.js';
import { Progress, stormLoadDriver } from '../scenario/index.js';
import type { Builder } from './builder.js';
import { judgeStep, type StepJudgement } from './classify.js';
import { stepScenario, type StepScenarioSpec } from './step-scenario.js';

export interface StepInput {
  workTree: string;
  commit: string;
  /** The step's folder: build.log, bin/, run/. */
  dir: string;
  spec: StepScenarioSpec;
  /** How to build; null with `binDir`: the folder is already built. */
  builder: Builder | null;
  binDir?: string;
  /** Remove bin/ after the run (SPIRE's binaries are ~100 MiB a step). */
  dropBuild: boolean;
  say(line: string): void;
  signal: AbortSignal;
}

export interface StepOutcome {
  /** The run or the build was interrupted: nothing to judge, the step is to be tested again. */
  interrupted: boolean;
  judgement: StepJudgement;
  build: { ok: boolean; seconds: number; replaced: string[] };
  /** The run folder (absolute); null when no run started. */
  runDir: string | null;
  runSeconds: number | null;
}

const seconds = (since: number) => +((Date.now() - since) / 1000).toFixed(1);
const skip = (reason: string): StepJudgement => ({ mark: 'skip', reason, verdict: null, figures: null });

export async function runStep(s: StepInput): Promise<StepOutcome> {
  mkdirSync(s.dir, { recursive: true });
  const binDir = s.binDir ?? join(s.dir, 'bin');
  const build = { ok: true, seconds: 0, replaced: [] as string[] };
  if (s.builder) {
    mkdirSync(binDir, { recursive: true });
    const logFile = join(s.dir, 'build.log');
    s.say(`building ${s.commit.slice(0, 9)}: ${s.builder.describe} (log: ${relative(process.cwd(), logFile) || logFile})`);
    const started = Date.now();
    const built = await s.builder.build({
      workTree: s.workTree,
      commit: s.commit,
      binDir,
      stepDir: s.dir,
      logFile,
      say: s.say,
      signal: s.signal,
    });
    Object.assign(build, { ok: built.ok, seconds: seconds(started), replaced: built.replaced });
    if (s.signal.aborted) return { interrupted: true, judgement: skip('interrupted while building'), build, runDir: null, runSeconds: null };
    if (!built.ok) return { interrupted: false, judgement: skip(`the build failed: ${built.reason}`), build, runDir: null, runSeconds: null };
    s.say(`built in ${build.seconds.toFixed(0)} s`);
  }
  try {
    return { ...(await runBuilt(s, binDir)), build };
  } finally {
    if (s.builder && s.dropBuild) rmSync(binDir, { recursive: true, force: true });
  }
}

async function runBuilt(s: StepInput, binDir: string): Promise<Omit<StepOutcome, 'build'>> {
  const scenario = stepScenario(s.spec, binDir);
  const runDir = join(s.dir, 'run');
  const started = Date.now();
  try {
    const outcome = await runScenario({
      loaded: scenario.loaded,
      load: stormLoadDriver,
      outDir: runDir,
      command: scenario.command,
      droppedExpectations: scenario.dropped,
      progress: new Progress(),
    });
    const status = outcome.results.status;
    if (status === 'interrupted' || status === 'incomplete')
      return { interrupted: true, judgement: skip('interrupted while running'), runDir: outcome.runDir, runSeconds: seconds(started) };
    return { interrupted: false, judgement: judgeStep(outcome.results, s.spec.variant), runDir: outcome.runDir, runSeconds: seconds(started) };
  } catch (err) {
    // What the build made cannot be run (binaries missing, a release the config refuses): the
    // commit cannot be tested, which is a skip, not the bisect's end.
    if (!(err instanceof AttestormError) || s.signal.aborted) throw err;
    return { interrupted: false, judgement: skip(`not judged: the build cannot be run: ${err.message}`), runDir: null, runSeconds: seconds(started) };
  }
}
