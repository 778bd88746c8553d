// Reads one run folder (results.json plus every samples.ndjson) back into memory. Reports are rendered
// only from what this returns, so `attestorm report` works offline on any saved run folder.
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from '../errors.js';
import { RESULTS_SCHEMA_VERSION, type RunResults, type SampleLine } from '../scenario/index.js';

export interface LoadedRun {
  /** Absolute path of the run folder. */
  dir: string;
  /** Short name for tables and legends: the folder's base name. */
  label: string;
  results: RunResults;
  /** Sample lines per repetition folder name ("pre-attestation.r1"), in file order. */
  samples: Map<string, SampleLine[]>;
  /** Things tolerated while reading (truncated last line, missing sample files). */
  warnings: string[];
}

const SAMPLE_KINDS = new Set(['memory', 'load', 'metrics', 'event']);

export async function loadRun(runDir: string): Promise<LoadedRun> {
  const dir = path.resolve(runDir);
  const info = await stat(dir).catch(() => null);
  if (!info) throw new ConfigError(`run folder ${runDir} does not exist`);
  if (!info.isDirectory()) throw new ConfigError(`run folder ${runDir} is not a directory`);

  const results = await readResults(dir, runDir);
  const samples = new Map<string, SampleLine[]>();
  const warnings: string[] = [];
  for (const placement of results.placements) {
    for (const rep of placement.runDirs) {
      const file = path.join(dir, rep, 'samples.ndjson');
      const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return null;
        throw new ConfigError(`cannot read ${file}: ${err.message}`, { cause: err });
      });
      if (text === null) {
        // A placement that failed before its load started has no samples; the table still has its row.
        warnings.push(`${rep}/samples.ndjson is missing`);
        samples.set(rep, []);
        continue;
      }
      samples.set(rep, parseSamples(text, file, warnings));
    }
  }
  return { dir, label: path.basename(dir), results, samples, warnings };
}

async function readResults(dir: string, given: string): Promise<RunResults> {
  const file = path.join(dir, 'results.json');
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`run folder ${given} has no results.json (is it a run folder?)`, { cause: err });
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`${file} is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  const obj = data as Partial<RunResults> | null;
  if (!obj || typeof obj !== 'object') throw new ConfigError(`${file} must hold a JSON object`);
  if (obj.schemaVersion !== RESULTS_SCHEMA_VERSION) {
    throw new ConfigError(
      `${file} has schemaVersion ${JSON.stringify(obj.schemaVersion)}, this attestorm reads schemaVersion ${RESULTS_SCHEMA_VERSION}`,
    );
  }
  if (!Array.isArray(obj.placements)) throw new ConfigError(`${file}: placements must be an array`);
  for (const [i, p] of obj.placements.entries()) {
    if (!p || typeof p.name !== 'string' || !Array.isArray(p.runDirs)) {
      throw new ConfigError(`${file}: placements[${i}] must have a name and runDirs`);
    }
    for (const rep of p.runDirs) {
      // Sample folders are read relative to the run folder; refuse anything that would leave it.
      if (typeof rep !== 'string' || rep.includes('/') || rep.includes('\\') || rep === '..' || rep === '.') {
        throw new ConfigError(`${file}: placements[${i}].runDirs holds an invalid folder name ${JSON.stringify(rep)}`);
      }
    }
  }
  return obj as RunResults;
}

/**
 * One SampleLine per line. The runner appends while it runs, so an interrupted run may end with a
 * half-written line: that one is dropped with a warning. A bad line anywhere else is corruption.
 */
export function parseSamples(text: string, file: string, warnings: string[]): SampleLine[] {
  const lines = text.split('\n');
  const out: SampleLine[] = [];
  let last = lines.length - 1;
  while (last >= 0 && lines[last]!.trim() === '') last--;
  for (let i = 0; i <= last; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch (err) {
      if (i === last) {
        warnings.push(`${file}: dropped a truncated last line`);
        break;
      }
      throw new ConfigError(`${file}:${i + 1} is not a JSON sample line: ${(err as Error).message}`, { cause: err });
    }
    const kind = (parsed as { kind?: unknown } | null)?.kind;
    const t = (parsed as { t?: unknown } | null)?.t;
    if (typeof kind !== 'string' || !SAMPLE_KINDS.has(kind) || typeof t !== 'number') {
      // Newer writers may add kinds; skipping unknown ones keeps old reports renderable.
      continue;
    }
    out.push(parsed as SampleLine);
  }
  return out;
}
