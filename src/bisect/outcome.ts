// What git's last words mean for the record: the first bad commit, the candidates when skips
// leave it open, or a merge base that is already bad; each with its subject.
import type { BisectOutcome } from './bisect-state.js';
import type { BisectNext } from './git-bisect.js';
import { commitSubject } from './git.js';

export async function outcomeOf(repo: string, next: Exclude<BisectNext, { kind: 'test' }>): Promise<BisectOutcome> {
  if (next.kind === 'candidates') {
    const commits = [];
    for (const commit of next.commits) commits.push({ commit, subject: await commitSubject(repo, commit) });
    return { kind: 'candidates', commits };
  }
  return { kind: next.kind, commit: next.commit, subject: await commitSubject(repo, next.commit) };
}

/** The outcome in one sentence, for the terminal and the reports. */
export function outcomeSentence(o: BisectOutcome): string {
  if (o.kind === 'first-bad') return `first bad commit: ${o.commit} ${o.subject}`;
  if (o.kind === 'merge-base-bad')
    return `the merge base ${o.commit} (${o.subject}) of the good and bad commits is already bad: the change is older than the good commit's line, or the good commit fixed it`;
  return `skipped commits leave it open: the first bad commit is one of ${o.commits.length}: ${o.commits.map((c) => c.commit.slice(0, 9)).join(', ')}`;
}
