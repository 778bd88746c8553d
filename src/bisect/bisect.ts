// `attestorm bisect`: git's bisection over a range of the user's checkout, each commit built in a
// worktree of a shared clone, stormed and judged by the scenario's verdict rules, until git names
// the first bad commit (or the candidates skips leave). bisect.json says where it is after every
// change; the same command (or --resume) carries on from there after an interrupt or a kill.
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { currentRunner, runnerState } from '../contract/index.js';
import { ConfigError, RunError } from '../errors.js';
import { onCleanup, onInterrupt, subdirectories } from '../util/index.js';
import { BISECT_SCHEMA_VERSION, readState, settingsDifferences, writeState, type BisectSettings, type BisectState } from './bisect-state.js';
import { writeBisectReports } from './bisect-report.js';
import type { Builder } from './builder.js';
import { GitBisect, type BisectNext } from './git-bisect.js';
import { addWorktree, commitSubject, rangeSize, removeWorktree, sharedClone } from './git.js';
import { runStep } from './step.js';
import { stepLine, testLine } from './progress-lines.js';
import { outcomeOf } from './outcome.js';

export interface BisectOptions {
  /** The bisect's folder: bisect.json, the reports, steps/, and while it runs repo.git and work/. */
  dir: string;
  settings: BisectSettings;
  builder: Builder;
  /** The command line, recorded. */
  command: string;
  /** Progress lines (default stderr). */
  say?: (line: string) => void;
}

export interface BisectResult {
  state: BisectState;
  /** True when the folder held a finished bisect and nothing ran. */
  alreadyDone: boolean;
}

/** The state to go on from: a new one, or the folder's (same settings, nobody running it). */
function openState(o: BisectOptions, rangeCommits: number): { state: BisectState; alreadyDone: boolean } {
  const old = readState(o.dir);
  const now = new Date().toISOString();
  if (!old) {
    return {
      alreadyDone: false,
      state: {
        schemaVersion: BISECT_SCHEMA_VERSION,
        command: o.command,
        settings: o.settings,
        runner: currentRunner(),
        status: 'running',
        startedAt: now,
        endedAt: null,
        rangeCommits,
        attempts: 0,
        steps: [],
        current: null,
        unfinished: [],
        outcome: null,
      },
    };
  }
  const diff = settingsDifferences(old.settings, o.settings);
  if (diff.length)
    throw new ConfigError([
      `${o.dir} holds a bisect asked differently (give --out for a new one, or --resume ${o.dir} to go on with its own settings):`,
      ...diff,
    ]);
  if (old.status === 'complete') return { state: old, alreadyDone: true };
  if (old.status === 'running' && runnerState(old) === 'alive') throw new RunError(`${o.dir}: a bisect is running there now (pid ${old.runner.pid})`);
  const unfinished = old.current ? [...old.unfinished, old.current] : old.unfinished;
  const { statusDetail: _gone, ...rest } = old;
  return { alreadyDone: false, state: { ...rest, command: o.command, runner: currentRunner(), status: 'running', endedAt: null, current: null, unfinished } };
}

export async function runBisect(o: BisectOptions): Promise<BisectResult> {
  const say = o.say ?? ((l: string) => process.stderr.write(`${l}\n`));
  const { settings } = o;
  mkdirSync(o.dir, { recursive: true });
  const opened = openState(o, await rangeSize(settings.source, settings.good.commit, settings.bad.commit));
  const state = opened.state;
  if (opened.alreadyDone) {
    writeBisectReports(o.dir, state);
    return { state, alreadyDone: true };
  }
  if (state.attempts > 0)
    say(`bisect: resuming ${o.dir}: ${state.steps.length} step(s) done, ${state.unfinished.length} unfinished attempt(s) kept and tested again`);
  writeState(o.dir, state);

  const abort = new AbortController();
  const offInterrupt = onInterrupt((signal) => {
    abort.abort();
    // Said at once: the process may end before the step unwinds.
    state.status = 'interrupted';
    state.statusDetail = `${signal}${state.current ? ` during step ${state.current.n} (${state.current.commit.slice(0, 9)})` : ''}; the same command resumes it`;
    writeState(o.dir, state);
    writeBisectReports(o.dir, state);
  });
  try {
    const next = await search(o, state, abort.signal, say);
    if (abort.signal.aborted || next === null) return { state, alreadyDone: false };
    state.outcome = await outcomeOf(repoOf(o.dir), next);
    state.status = 'complete';
    state.endedAt = new Date().toISOString();
    writeState(o.dir, state);
    writeBisectReports(o.dir, state);
    rmSync(repoOf(o.dir), { recursive: true, force: true });
    rmSync(join(o.dir, 'work'), { recursive: true, force: true });
    return { state, alreadyDone: false };
  } catch (err) {
    if (!abort.signal.aborted) {
      state.status = 'failed';
      state.statusDetail = (err as Error).message;
      state.endedAt = new Date().toISOString();
      writeState(o.dir, state);
      writeBisectReports(o.dir, state);
    }
    throw err;
  } finally {
    offInterrupt();
  }
}

const repoOf = (dir: string) => join(dir, 'repo.git');

/** git's bisection from the recorded marks on, a step per commit it names; null when interrupted. */
async function search(
  o: BisectOptions,
  state: BisectState,
  signal: AbortSignal,
  say: (l: string) => void,
): Promise<Exclude<BisectNext, { kind: 'test' }> | null> {
  const { settings } = o;
  const repo = repoOf(o.dir);
  if (!existsSync(repo)) await sharedClone(settings.source, repo);
  // Worktrees a killed bisect left behind.
  for (const name of subdirectories(join(o.dir, 'work'))) removeWorktree(repo, join(o.dir, 'work', name));
  const bisect = new GitBisect(repo);
  let next = await bisect.start(
    settings.good.commit,
    settings.bad.commit,
    state.steps.map((s) => ({ commit: s.commit, mark: s.mark })),
  );
  while (next.kind === 'test') {
    const commit = next.commit;
    const n = ++state.attempts;
    const folder = join('steps', `${String(n).padStart(2, '0')}-${commit.slice(0, 12)}`);
    const attempt = { n, commit, folder, startedAt: new Date().toISOString() };
    state.current = attempt;
    writeState(o.dir, state);
    const subject = await commitSubject(repo, commit);
    say(testLine(state, n, commit, subject, next.stepsAfter));
    const workTree = join(o.dir, 'work', commit.slice(0, 12));
    await addWorktree(repo, workTree, commit);
    const offCleanup = onCleanup(() => removeWorktree(repo, workTree));
    const started = Date.now();
    let outcome;
    try {
      outcome = await runStep({
        workTree,
        commit,
        dir: join(o.dir, folder),
        spec: { file: settings.scenario, variant: settings.variant, repetitions: settings.repetitions, duration: settings.duration, set: settings.set },
        builder: o.builder,
        dropBuild: !settings.keepBuilds,
        say: (l) => say(`  ${l}`),
        signal,
      });
    } finally {
      removeWorktree(repo, workTree);
      offCleanup();
    }
    if (outcome.interrupted || signal.aborted) return null;
    const { judgement } = outcome;
    state.steps.push({
      n,
      commit,
      subject,
      mark: judgement.mark,
      reason: judgement.reason,
      verdict: judgement.verdict,
      figures: judgement.figures,
      folder,
      runDir: outcome.runDir ? relative(o.dir, outcome.runDir) : null,
      build: outcome.build,
      runSeconds: outcome.runSeconds,
      seconds: +((Date.now() - started) / 1000).toFixed(1),
      startedAt: attempt.startedAt,
    });
    state.current = null;
    writeState(o.dir, state);
    writeBisectReports(o.dir, state);
    say(stepLine(state.steps.at(-1)!));
    next = await bisect.mark(commit, judgement.mark);
  }
  return next;
}
