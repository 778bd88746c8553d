// Reads a results.json given as a run folder or as the file itself (--baseline, history), with
// errors that name the flag and the file.
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../errors.js';
import { RESULTS_SCHEMA_VERSION, type RunResults } from '../contract/index.js';

export interface ResultsFile {
  /** The results.json path. */
  file: string;
  results: RunResults;
}

/** `given` is a run folder or a results.json. `what` names the input in errors ("--baseline"). */
export function readResultsFile(given: string, what: string): ResultsFile {
  const info = statOrNull(given);
  if (!info) throw new ConfigError(`${what} ${given}: no such file or folder`);
  const file = info.isDirectory() ? path.join(given, 'results.json') : given;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(
      `${what} ${given}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); give a run folder or its results.json`,
      { cause: err },
    );
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`${what} ${file} is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  const obj = data as Partial<RunResults> | null;
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) throw new ConfigError(`${what} ${file} must hold a JSON object (an attestorm results.json)`);
  if (typeof obj.schemaVersion !== 'number') throw new ConfigError(`${what} ${file} has no schemaVersion: is it an attestorm results.json?`);
  if (typeof obj.scenario?.name !== 'string') throw new ConfigError(`${what} ${file} has no scenario.name: is it an attestorm results.json?`);
  // Another schema is returned as is: the gate refuses it with a message saying which versions differ.
  if (obj.schemaVersion === RESULTS_SCHEMA_VERSION) {
    if (!Array.isArray(obj.variants)) throw new ConfigError(`${what} ${file}: variants must be an array`);
    for (const [i, v] of obj.variants.entries()) {
      if (!v || typeof v.name !== 'string' || !Array.isArray(v.runDirs) || typeof v.spread !== 'object' || !v.latency) {
        throw new ConfigError(`${what} ${file}: variants[${i}] must have a name, runDirs, spread and latency`);
      }
    }
  }
  return { file, results: obj as RunResults };
}

function statOrNull(p: string) {
  try {
    return statSync(p);
  } catch {
    return null;
  }
}
