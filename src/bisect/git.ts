// git as a bisect uses it. The user's checkout (a work tree or a bare repository) is only read:
// refs are resolved there, and everything that writes — bisect refs, worktrees — happens in a
// shared clone inside the bisect's folder, whose objects are the checkout's own (no copy).
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { ConfigError, PlatformError, RunError } from '../errors.js';

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

// No pager, no prompts, no hooks asking for input, and git's messages in English so they parse.
const GIT_ENV = { GIT_PAGER: 'cat', GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C', LANG: 'C' };

/** Runs git in `cwd`; resolves with its code (never throws for a non-zero exit). */
export function git(cwd: string, args: readonly string[]): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    execFile('git', args, { cwd, env: { ...process.env, ...GIT_ENV }, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const e = err as (NodeJS.ErrnoException & { code?: number | string }) | null;
      if (e && e.code === 'ENOENT') return reject(new PlatformError('`git` is not on PATH: apt-get install git'));
      resolve({ code: e ? (typeof e.code === 'number' ? e.code : 1) : 0, stdout, stderr });
    });
  });
}

/** git that must succeed: a RunError naming the command and git's own words otherwise. */
export async function gitOk(cwd: string, args: readonly string[]): Promise<string> {
  const r = await git(cwd, args);
  if (r.code !== 0)
    throw new RunError(`git ${args.join(' ')} (in ${cwd}) failed (exit ${r.code}): ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' | ')}`);
  return r.stdout;
}

/** Whether `dir` is a git repository or work tree; a ConfigError naming `what` otherwise. */
export async function checkRepository(dir: string, what: string): Promise<void> {
  if (!existsSync(dir)) throw new ConfigError(`${what} ${dir}: no such folder`);
  const r = await git(dir, ['rev-parse', '--git-dir']);
  if (r.code !== 0) throw new ConfigError(`${what} ${dir}: not a git repository or work tree (${r.stderr.trim().split('\n')[0]})`);
}

/** The commit a ref names in `repo`; a ConfigError naming the flag when it names none. */
export async function resolveCommit(repo: string, ref: string, flag: string): Promise<string> {
  const r = await git(repo, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`]);
  if (r.code !== 0) throw new ConfigError(`${flag} ${ref}: names no commit in ${repo}`);
  return r.stdout.trim();
}

/** Whether commit `a` is an ancestor of (or the same as) `b`. */
export async function isAncestor(repo: string, a: string, b: string): Promise<boolean> {
  return (await git(repo, ['merge-base', '--is-ancestor', a, b])).code === 0;
}

/** A commit's subject line. */
export async function commitSubject(repo: string, commit: string): Promise<string> {
  return (await gitOk(repo, ['log', '-1', '--format=%s', commit])).trim();
}

/** The number of commits in `bad` not in `good`: what a bisect searches. */
export async function rangeSize(repo: string, good: string, bad: string): Promise<number> {
  return Number((await gitOk(repo, ['rev-list', '--count', bad, `^${good}`])).trim());
}

/** A bare clone of `source` at `dir` that borrows its objects (git clone --shared): nothing is copied, and the source is not written. */
export async function sharedClone(source: string, dir: string): Promise<void> {
  await gitOk(source, ['clone', '--quiet', '--bare', '--shared', '--', source, dir]);
}

/** Checks `commit` out into a new worktree of `repo` at `dir` (detached; nothing else changes). */
export async function addWorktree(repo: string, dir: string, commit: string): Promise<void> {
  await gitOk(repo, ['worktree', 'add', '--quiet', '--force', '--detach', dir, commit]);
}

/**
 * Removes a worktree and git's note of it, whatever state a build left it in. Synchronous, so it
 * also runs from a cleanup while the process is being interrupted.
 */
export function removeWorktree(repo: string, dir: string): void {
  try {
    execFileSync('git', ['worktree', 'remove', '--force', '--force', dir], { cwd: repo, env: { ...process.env, ...GIT_ENV }, stdio: 'ignore' });
  } catch {
    // Already gone, or git could not: the folder goes below and prune forgets it.
  }
  rmSync(dir, { recursive: true, force: true });
  try {
    execFileSync('git', ['worktree', 'prune'], { cwd: repo, env: { ...process.env, ...GIT_ENV }, stdio: 'ignore' });
  } catch {
    // The clone itself is gone: nothing to forget.
  }
}

/** HEAD's commit and the top of the work tree that holds `cwd` (what `git bisect run` checked out). */
export async function workTreeHead(cwd: string): Promise<{ top: string; commit: string }> {
  const top = await git(cwd, ['rev-parse', '--show-toplevel']);
  if (top.code !== 0) throw new ConfigError(`--work-tree ${cwd}: not inside a git work tree (${top.stderr.trim().split('\n')[0]})`);
  const dir = top.stdout.trim();
  return { top: dir, commit: (await gitOk(dir, ['rev-parse', 'HEAD'])).trim() };
}
