// `attestorm report <before> <after>`: the baseline verdict table of each later run folder against
// the first, as console text and as Markdown (baseline.md). Runs that cannot be compared (another
// scenario or schema) get the reason instead of verdicts; the report itself still renders.
import path from 'node:path';
import { ConfigError } from '../errors.js';
import { compareWithBaseline, RULE, type BaselineComparison } from './baseline.js';
import { baselineTableMarkdown, baselineTableText } from './baseline-table.js';
import { readResultsFile } from './results-file.js';
import type { Tolerances } from './tolerance.js';

export interface FolderComparison {
  dir: string;
  comparison: BaselineComparison | null;
  /** Why there are no verdicts, when comparison is null. */
  refused: string | null;
}

export function compareRunFolders(runDirs: string[], tolerances: Tolerances): { text: string; markdown: string; comparisons: FolderComparison[] } {
  if (runDirs.length < 2) throw new ConfigError('a baseline comparison needs two run folders: the baseline first, then the run to compare');
  const first = readResultsFile(runDirs[0]!, 'report');
  const text: string[] = [];
  const md: string[] = ['# Baseline verdicts', ''];
  const comparisons: FolderComparison[] = [];
  const name = (d: string) => path.basename(path.resolve(d));
  for (const dir of runDirs.slice(1)) {
    md.push(`## ${name(dir)} against ${name(runDirs[0]!)}`, '');
    try {
      const cmp = compareWithBaseline(first.results, readResultsFile(dir, 'report').results, tolerances, { from: first.file, what: 'baseline' });
      text.push(`\n${path.resolve(dir)}:\n${baselineTableText(cmp)}`);
      md.push(`${cmp.regressed} regressed, ${cmp.improved} improved, ${cmp.unchanged} unchanged.`, '', ...baselineTableMarkdown(cmp), '');
      md.push(...cmp.notes.map((n) => `- note: ${n}`), ...(cmp.notes.length ? [''] : []));
      comparisons.push({ dir, comparison: cmp, refused: null });
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      text.push(`\n${path.resolve(dir)}: no baseline verdicts: ${err.message}\n`);
      md.push(`No baseline verdicts: ${err.message}`, '');
      comparisons.push({ dir, comparison: null, refused: err.message });
    }
  }
  md.push(`Rule: ${RULE}`, '');
  return { text: text.join(''), markdown: md.join('\n'), comparisons };
}
