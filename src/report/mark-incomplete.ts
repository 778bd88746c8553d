// Run folders whose runner died: results.json still says `running`. `attestorm cleanup` rewrites
// them as `incomplete` (keeping every recorded figure), so no reader takes them for live runs.
import { readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runnerState, type RunResults } from '../contract/index.js';

/** Folders below `root` (one level) whose results.json says running while its runner is gone. */
export function findIncompleteRuns(root: string): string[] {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const name of names) {
    const dir = join(root, name);
    try {
      if (!statSync(dir).isDirectory()) continue;
      const r = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as RunResults;
      if (r.status === 'running' && runnerState(r) === 'gone') out.push(dir);
    } catch {
      // Not a run folder, or unreadable: not ours to touch.
    }
  }
  return out;
}

/** Rewrites one folder's results.json as incomplete, saying why. */
export function markIncomplete(dir: string): void {
  const file = join(dir, 'results.json');
  const r = JSON.parse(readFileSync(file, 'utf8')) as RunResults;
  r.status = 'incomplete';
  r.statusDetail = `its runner (pid ${r.runner?.pid} on ${r.runner?.hostname}) died while it said running; marked by attestorm cleanup at ${new Date().toISOString()}`;
  r.passed = false;
  if (r.verdict === 'passed') r.verdict = 'inconclusive';
  writeFileSync(`${file}.tmp`, `${JSON.stringify(r, null, 2)}\n`);
  renameSync(`${file}.tmp`, file);
}
