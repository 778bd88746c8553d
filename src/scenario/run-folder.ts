// The run folder on disk: where it goes, the reports/latest link, and results.json written
// atomically (temp file + rename) so a reader never sees half a file, even mid-run.
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync, lstatSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { stringify } from 'yaml';
import type { RunResults } from '../contract/index.js';

/** reports/<scenario>-<UTC timestamp>, e.g. reports/quick-20261129T203501Z. */
export function defaultRunDir(scenarioName: string, now = new Date(), root = 'reports'): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return join(root, `${scenarioName}-${stamp}`);
}

export function createRunDir(dir: string): string {
  mkdirSync(dir, { recursive: true });
  return resolve(dir);
}

/**
 * Points reports/latest at the run folder (relative link), replacing an older link — only in the
 * reports folder runs go to by default: a `latest` anywhere else (say /tmp/latest) is not ours.
 */
export function linkLatest(runDir: string, reportsRoot = resolve('reports')): void {
  if (resolve(dirname(runDir)) !== resolve(reportsRoot)) return;
  const link = join(dirname(runDir), 'latest');
  try {
    if (lstatSync(link).isSymbolicLink()) rmSync(link);
    else return; // A real folder named latest belongs to the user: leave it alone.
  } catch {
    // No link yet.
  }
  try {
    symlinkSync(basename(runDir), link);
  } catch {
    // Filesystems without symlinks: the run folder itself is still complete.
  }
}

export function writeScenarioCopy(runDir: string, resolved: unknown): void {
  writeFileSync(join(runDir, 'scenario.yaml'), `# The scenario as run, defaults applied (durations in ms, sizes in bytes)\n${stringify(resolved)}`);
}

export function writeResults(runDir: string, results: RunResults): void {
  const file = join(runDir, 'results.json');
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(results, null, 2)}\n`);
  renameSync(tmp, file);
}

export function variantDirName(variant: string, rep: number): string {
  return `${variant}.r${rep}`;
}
