// How a step turns a commit's work tree into a folder of binaries the variant runs: SPIRE's Go
// build by default, or the user's own command (--build) for any other agent.
export interface BuildContext {
  /** The commit's work tree (the bisect's worktree, or the tree `git bisect run` checked out). */
  workTree: string;
  commit: string;
  /** The folder to fill; the variant's agent.binDir. */
  binDir: string;
  /** The step's own folder, for what the build needs beside the tree (a go.mod of its own). */
  stepDir: string;
  /** Every command and its output are appended here. */
  logFile: string;
  /** Lines worth saying (a module version replaced): on stderr and in the log. */
  say(line: string): void;
  signal?: AbortSignal;
}

export type BuildOutcome =
  | { ok: true; replaced: string[] }
  /** `reason`: one line on why, for the step's record (the log has the rest). */
  | { ok: false; reason: string; replaced: string[] };

export interface Builder {
  /** "spire" or "command": recorded with the bisect, so a resume builds as the start did. */
  readonly kind: 'spire' | 'command';
  /** One phrase for the progress lines and the reports. */
  readonly describe: string;
  /** What this machine lacks to build at all (go not on PATH); checked before the first step. */
  problems(): Promise<string[]>;
  build(ctx: BuildContext): Promise<BuildOutcome>;
}

/** The last lines of a build's output, on one line, for a record. */
export function lastLines(output: string, n = 3): string {
  return output
    .trim()
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('go: downloading'))
    .slice(-n)
    .join(' | ');
}
