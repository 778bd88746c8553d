// The search itself is git's: `git bisect` in the bisect's own clone (never the user's checkout),
// started afresh from the recorded marks each time, so the state file is the only state there is.
// What git prints after each mark says what comes next; parseBisectOutput reads it.
import { RunError } from '../errors.js';
import { git, gitOk } from './git.js';

export type Mark = 'good' | 'bad' | 'skip';

/** What git says after a mark: the next commit to test, or the end of the search. */
export type BisectNext =
  /** `stepsAfter`: git's "roughly N steps" after this one; null when git gave none (a merge base to test). */
  | { kind: 'test'; commit: string; stepsAfter: number | null }
  | { kind: 'first-bad'; commit: string }
  /** Only skipped commits are left: the first bad commit is one of these, as git lists them. */
  | { kind: 'candidates'; commits: string[] }
  /** The merge base of good and bad is bad: the change came before the good commit's line forked. */
  | { kind: 'merge-base-bad'; commit: string };

const SHA = '[0-9a-f]{40}';

/** Reads git bisect's words (start, good, bad, skip); null when they say none of the known things. */
export function parseBisectOutput(text: string): BisectNext | null {
  const first = new RegExp(`^(${SHA}) is the first bad commit`, 'm').exec(text);
  if (first) return { kind: 'first-bad', commit: first[1]! };
  const any = /The first bad commit could be any of:\n([\s\S]*?)(?:\nWe cannot bisect more!|$)/.exec(text);
  if (any) return { kind: 'candidates', commits: any[1]!.match(new RegExp(SHA, 'g')) ?? [] };
  const base = new RegExp(`The merge base (${SHA}) is bad`).exec(text);
  if (base) return { kind: 'merge-base-bad', commit: base[1]! };
  const next = new RegExp(`^\\[(${SHA})\\]`, 'm').exec(text);
  if (!next) return null;
  const steps = /\(roughly (\d+) steps?\)/.exec(text);
  return { kind: 'test', commit: next[1]!, stepsAfter: steps ? Number(steps[1]) : null };
}

/** A git bisect in `repo` (a bare clone): started from good and bad, the marks so far replayed. */
export class GitBisect {
  constructor(readonly repo: string) {}

  /** Starts afresh and replays `marks` in order; returns what git says is next. */
  async start(good: string, bad: string, marks: ReadonlyArray<{ commit: string; mark: Mark }>): Promise<BisectNext> {
    await git(this.repo, ['bisect', 'reset']);
    let next = await this.#say(['bisect', 'start', '--no-checkout', bad, good]);
    for (const m of marks) next = await this.mark(m.commit, m.mark);
    return next;
  }

  async mark(commit: string, mark: Mark): Promise<BisectNext> {
    return this.#say(['bisect', mark, commit]);
  }

  async #say(args: string[]): Promise<BisectNext> {
    const r = await git(this.repo, args);
    const text = `${r.stdout}\n${r.stderr}`;
    const next = parseBisectOutput(text);
    if (next) return next;
    // No mark changes an ended search's words: git repeats them, or fails with its reason.
    if (r.code !== 0) await gitOk(this.repo, args);
    throw new RunError(`git ${args.join(' ')} said nothing a bisect can follow: ${text.trim().split('\n').slice(0, 3).join(' | ')}`);
  }
}
