// `attestorm bisect-step`: one step on the work tree `git bisect run` checked out, answered in
// git's exit codes — 0 good, 1 bad, 125 skip (cannot be tested) — so a maintainer can drive the
// bisection from git. The work tree is never written (SPIRE's build reads a go.mod of its own).
import { join } from 'node:path';
import { onInterrupt } from '../util/index.js';
import type { Builder } from './builder.js';
import type { StepJudgement } from './classify.js';
import { workTreeHead } from './git.js';
import { figuresText } from './progress-lines.js';
import { runStep } from './step.js';
import type { StepScenarioSpec } from './step-scenario.js';

/** git bisect run's words: good, bad, skip; any code above 127 ends git's bisection. */
export const BISECT_EXIT = { good: 0, bad: 1, skip: 125, abort: 128, interrupted: 130 } as const;

export interface BisectStepOptions {
  /** A folder in the work tree to test (its top and HEAD are asked of git). */
  workTree: string;
  spec: StepScenarioSpec;
  /** Build with this; null: `binDir` is already built. */
  builder: Builder | null;
  binDir: string | null;
  /** The parent of the step's folder (<out>/<commit>-<time>). */
  out: string;
  say?: (line: string) => void;
}

export interface BisectStepResult {
  exit: number;
  commit: string;
  dir: string;
  judgement: StepJudgement | null;
}

export async function bisectStep(o: BisectStepOptions): Promise<BisectStepResult> {
  const say = o.say ?? ((l: string) => process.stderr.write(`${l}\n`));
  const { top, commit } = await workTreeHead(o.workTree);
  const stamp = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  const dir = join(o.out, `${commit.slice(0, 12)}-${stamp}`);
  const abort = new AbortController();
  const off = onInterrupt(() => abort.abort());
  try {
    say(`bisect-step: ${commit.slice(0, 9)} in ${top}, into ${dir}`);
    const outcome = await runStep({
      workTree: top,
      commit,
      dir,
      spec: o.spec,
      builder: o.builder,
      ...(o.binDir ? { binDir: o.binDir } : {}),
      dropBuild: false,
      say: (l) => say(`  ${l}`),
      signal: abort.signal,
    });
    if (outcome.interrupted) return { exit: BISECT_EXIT.interrupted, commit, dir, judgement: null };
    const j = outcome.judgement;
    say(`bisect-step: ${commit.slice(0, 9)} is ${j.mark} — ${j.reason}${j.figures ? ` (${figuresText(j.figures)})` : ''}`);
    return { exit: BISECT_EXIT[j.mark], commit, dir, judgement: j };
  } finally {
    off();
  }
}
