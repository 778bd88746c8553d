// git's bisection as the bisect drives it, on a synthetic history (no builds, no storms): the
// user's repository only read, git's words parsed, marks replayed from the record, and skips
// leaving the candidates git names.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GitBisect, parseBisectOutput, sharedClone, type BisectNext, type Mark } from '../../src/bisect/index.js';
import { makeAgentRepo } from './support/agent-repo.js';

const root = mkdtempSync(join(tmpdir(), 'attestorm-git-bisect-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);

describe('parseBisectOutput', () => {
  it('reads the next commit and the steps git expects after it', () => {
    expect(parseBisectOutput(`Bisecting: 3 revisions left to test after this (roughly 2 steps)\n[${A}] c4\n`)).toEqual({
      kind: 'test',
      commit: A,
      stepsAfter: 2,
    });
    expect(parseBisectOutput(`Bisecting: 0 revisions left to test after this (roughly 0 steps)\n[${A}] c3`)).toEqual({
      kind: 'test',
      commit: A,
      stepsAfter: 0,
    });
    expect(parseBisectOutput(`Bisecting: a merge base must be tested\n[${A}] refactor`)).toEqual({ kind: 'test', commit: A, stepsAfter: null });
  });

  it('reads the end: a first bad commit, candidates left by skips, a bad merge base', () => {
    expect(parseBisectOutput(`${A} is the first bad commit\ncommit ${A}\nAuthor: a\n`)).toEqual({ kind: 'first-bad', commit: A });
    expect(
      parseBisectOutput(`There are only 'skip'ped commits left to test.\nThe first bad commit could be any of:\n${A}\n${B}\nWe cannot bisect more!\n`),
    ).toEqual({
      kind: 'candidates',
      commits: [A, B],
    });
    expect(parseBisectOutput(`The merge base ${A} is bad.\nThis means the bug has been fixed between ${A} and [${B}].`)).toEqual({
      kind: 'merge-base-bad',
      commit: A,
    });
    expect(parseBisectOutput('fatal: something else')).toBeNull();
  });
});

/** Drives a bisection to its end with `markOf`; returns the marks made and the end. */
async function cloneOf(source: string, dir: string): Promise<string> {
  await sharedClone(source, dir);
  return dir;
}

async function drive(b: GitBisect, good: string, bad: string, markOf: (sha: string) => Mark) {
  const marks: Array<{ commit: string; mark: Mark }> = [];
  let next: BisectNext = await b.start(good, bad, []);
  while (next.kind === 'test') {
    const mark = markOf(next.commit);
    marks.push({ commit: next.commit, mark });
    next = await b.mark(next.commit, mark);
  }
  return { marks, end: next };
}

describe('GitBisect in a shared clone', () => {
  it('finds the first bad commit, skipping one that does not build, and the user repository is not written', async () => {
    const repo = makeAgentRepo(join(root, 'one'), 12, 7, [5]);
    const before = execFileSync('git', ['for-each-ref'], { cwd: repo.dir, encoding: 'utf8' });
    const clone = await cloneOf(repo.dir, join(root, 'one-clone.git'));
    const index = (sha: string) => repo.commits.indexOf(sha);
    const { marks, end } = await drive(new GitBisect(clone), repo.commits[0]!, repo.commits[11]!, (s) =>
      index(s) === 5 ? 'skip' : index(s) >= 7 ? 'bad' : 'good',
    );
    expect(end).toEqual({ kind: 'first-bad', commit: repo.commits[7] });
    expect(marks.length).toBeLessThanOrEqual(6);
    // Replayed from the record, git is where it was at every mark.
    const again = await new GitBisect(clone).start(repo.commits[0]!, repo.commits[11]!, marks);
    expect(again).toEqual(end);
    expect(execFileSync('git', ['for-each-ref'], { cwd: repo.dir, encoding: 'utf8' })).toBe(before);
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: repo.dir, encoding: 'utf8' })).toBe('');
  });

  it('names the candidates when the first bad commit and its neighbour cannot be tested', async () => {
    const repo = makeAgentRepo(join(root, 'two'), 8, 4, [3, 4]);
    const clone = await cloneOf(repo.dir, join(root, 'two-clone.git'));
    const index = (sha: string) => repo.commits.indexOf(sha);
    const { end } = await drive(new GitBisect(clone), repo.commits[0]!, repo.commits[7]!, (s) =>
      [3, 4].includes(index(s)) ? 'skip' : index(s) >= 4 ? 'bad' : 'good',
    );
    expect(end.kind).toBe('candidates');
    expect(new Set((end as { commits: string[] }).commits)).toEqual(new Set([repo.commits[3], repo.commits[4], repo.commits[5]]));
  });
});
