// Reading a scenario: YAML file → validated Scenario with defaults, CLI overrides applied on top,
// every problem reported at once with its path before anything is started.
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { ConfigError } from '../errors.js';
import { formatZodIssues } from '../util/index.js';
import { overridesSchema, scenarioSchema, variantProblems, type Overrides, type Scenario } from './schema.js';

export interface LoadedScenario {
  scenario: Scenario;
  /** The input as written (after overrides), for quoting expectation values. */
  raw: Record<string, unknown>;
  /** Path as given, or null for an in-memory scenario. */
  file: string | null;
}

/** "load.workersPerPod must be a positive integer, got 0" for every issue, prefixed with the file. */
export function scenarioProblems(error: z.ZodError, input: unknown, where: string): string[] {
  // A shared agent setting is checked once per variant that inherits it: report each problem once.
  return [...new Set(formatZodIssues(error, input).map((p) => `${where}${p.replace(/^(\S+): must /, '$1 must ')}`))];
}

/** Validates a scenario object; `where` prefixes each problem (e.g. "scenarios/quick.yaml: "). */
export function parseScenario(input: unknown, where = '', overrides: Overrides = {}): LoadedScenario {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new ConfigError(`${where}must be a YAML mapping of scenario keys, got ${Array.isArray(input) ? 'a list' : JSON.stringify(input)}`);
  }
  const raw: Record<string, unknown> = { ...(input as Record<string, unknown>) };
  for (const [k, v] of Object.entries(overrides)) if (v !== undefined) raw[k] = v;
  const result = scenarioSchema.safeParse(raw);
  if (!result.success) {
    const more = variantProblems(raw);
    throw new ConfigError([...new Set([...scenarioProblems(result.error, raw, where), ...(more ? scenarioProblems(more, raw, where) : [])])]);
  }
  return { scenario: result.data, raw, file: null };
}

/** Validates flag values against the override schema (same rules as the YAML keys). */
export function parseOverrides(input: Record<string, unknown>): Overrides {
  const clean = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
  const result = overridesSchema.safeParse(clean);
  if (!result.success) {
    // isolation comes from --agent-cpus: name the flag the user typed.
    throw new ConfigError(scenarioProblems(result.error, clean, '').map((p) => `--${p.replace(/^isolation\.agentCpus/, 'agent-cpus')}`));
  }
  // Keep the flag values as written (e.g. "30s") so the scenario parse applies the same units.
  return clean as Overrides;
}

/**
 * The mapping that holds the last segment of `segments` in `doc`: each segment names a key, or,
 * inside a list of named items (variants), the item of that name; missing mappings are created
 * when `create` says so. A string says why there is none.
 */
function parentOf(doc: Record<string, unknown>, segments: readonly string[], create: boolean): Record<string, unknown> | string {
  let at: unknown = doc;
  for (const [i, seg] of segments.slice(0, -1).entries()) {
    const here = segments.slice(0, i).join('.') || 'the scenario';
    if (Array.isArray(at)) {
      const item: unknown = at.find((x) => x !== null && typeof x === 'object' && (x as { name?: unknown }).name === seg);
      if (item === undefined) {
        const names = at.map((x) => (x as { name?: unknown })?.name).filter((n) => typeof n === 'string');
        return `${here} has no item named "${seg}" (it has ${names.join(', ') || 'none'})`;
      }
      at = item;
      continue;
    }
    if (at === null || typeof at !== 'object') return `${here} is not a mapping`;
    const obj = at as Record<string, unknown>;
    if ((obj[seg] === undefined || obj[seg] === null) && create) obj[seg] = {};
    at = obj[seg];
  }
  const here = segments.slice(0, -1).join('.') || 'the scenario';
  if (Array.isArray(at)) return `${segments.join('.')} names a whole item of ${here}; set one of its keys`;
  if (at === null || typeof at !== 'object') return create ? `${here} is not a mapping` : '';
  return at as Record<string, unknown>;
}

/**
 * `--set key.path=value` on the scenario as written, before it is checked: each dot-separated
 * segment names a key, or, inside a list of named items (variants), the item of that name;
 * missing mappings are created. The value is read as YAML (8Gi, 10, true, a string).
 */
export function applySettings(doc: Record<string, unknown>, settings: readonly string[]): Record<string, unknown> {
  const problems: string[] = [];
  const out = structuredClone(doc);
  for (const setting of settings) {
    const eq = setting.indexOf('=');
    const path = eq < 0 ? '' : setting.slice(0, eq);
    const segments = path.split('.');
    if (eq < 0 || segments.some((p) => p === '')) {
      problems.push(`--set must be key.path=value (e.g. variants.v1-15-3.agent.binDir=/opt/spire/1.15.3), got ${JSON.stringify(setting)}`);
      continue;
    }
    let value: unknown;
    try {
      value = parseYaml(setting.slice(eq + 1));
    } catch (err) {
      problems.push(`--set ${path}: the value is not valid YAML (${(err as Error).message})`);
      continue;
    }
    const parent = parentOf(out, segments, true);
    if (typeof parent === 'string') problems.push(`--set ${path}: ${parent}`);
    else parent[segments.at(-1)!] = value;
  }
  if (problems.length) throw new ConfigError(problems);
  return out;
}

/** The scenario as written without the keys at these paths (named as --set names them); a path that names nothing is no error. */
export function removeKeys(doc: Record<string, unknown>, paths: readonly string[]): Record<string, unknown> {
  const out = structuredClone(doc);
  for (const path of paths) {
    const segments = path.split('.');
    const parent = parentOf(out, segments, false);
    if (typeof parent !== 'string') delete parent[segments.at(-1)!];
  }
  return out;
}

/**
 * A scenario file, with `settings` (--set) applied and the keys at `unset` removed before it is
 * checked (a bisect step's variant names no release), then the flag overrides.
 */
export function readScenarioFile(path: string, overrides: Overrides = {}, settings: readonly string[] = [], unset: readonly string[] = []): LoadedScenario {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`${path}: cannot read the scenario file (${(err as Error).message})`);
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new ConfigError(`${path}: not valid YAML (${(err as Error).message})`);
  }
  if (doc === null || doc === undefined) throw new ConfigError(`${path}: the file is empty; a scenario needs at least a name`);
  const edited = settings.length > 0 || unset.length > 0;
  if (edited && (typeof doc !== 'object' || Array.isArray(doc))) throw new ConfigError(`${path}: must be a YAML mapping of scenario keys to take --set`);
  const input = edited ? removeKeys(applySettings(doc as Record<string, unknown>, settings), unset) : doc;
  const loaded = parseScenario(input, `${path}: `, overrides);
  return { ...loaded, file: path };
}
