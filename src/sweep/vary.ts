// `--vary <key>=<v1>,<v2>,...`: one scenario key and the values a sweep gives it. Each value is set
// in the scenario as written and the whole scenario validated, so a bad key or value is an error
// naming them before anything runs.
import { ConfigError } from '../errors.js';
import { parseScenario, type LoadedScenario } from '../scenario/index.js';
import { parseBytes, parseDurationMs } from '../util/index.js';

export interface Vary {
  /** Dotted key path in the scenario, e.g. load.workersPerPod, agent.memoryLimit. */
  key: string;
  /** Values as written ("300", "256Mi"). */
  values: string[];
}

/** Splits "load.workersPerPod=10,20,40". */
export function parseVary(text: string): Vary {
  const eq = text.indexOf('=');
  if (eq <= 0) throw new ConfigError(`--vary must be <key>=<v1>,<v2>,..., e.g. load.workersPerPod=10,20,40, got ${JSON.stringify(text)}`);
  const key = text.slice(0, eq).trim();
  const values = text
    .slice(eq + 1)
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
  if (!/^[A-Za-z_][\w-]*(\.[A-Za-z_][\w-]*)*$/.test(key))
    throw new ConfigError(`--vary: the key must be a dotted scenario key such as agent.memoryLimit, got ${JSON.stringify(key)}`);
  if (!values.length) throw new ConfigError(`--vary ${key}: give at least one value, got none`);
  if (new Set(values).size !== values.length) throw new ConfigError(`--vary ${key}: values must not repeat, got ${values.join(',')}`);
  return { key, values };
}

/** A value as YAML would read it: numbers stay numbers, sizes and durations stay strings. */
function typed(value: string): unknown {
  if (/^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  if (value === 'true' || value === 'false') return value === 'true';
  return value;
}

/** A number to order and bisect values by: plain numbers, sizes in bytes, durations in ms. */
export function numericValue(value: string): number | null {
  if (/^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  return parseBytes(value) ?? parseDurationMs(value);
}

function setPath(obj: Record<string, unknown>, path: string[], value: unknown): Record<string, unknown> {
  const [head, ...rest] = path;
  const copy = { ...obj };
  if (!rest.length) copy[head!] = value;
  else {
    const child = copy[head!];
    copy[head!] = setPath(child && typeof child === 'object' && !Array.isArray(child) ? (child as Record<string, unknown>) : {}, rest, value);
  }
  return copy;
}

/** The scenario with `key` set to `value`, validated (a problem names the key, the value and the rule). */
export function scenarioWith(base: LoadedScenario, key: string, value: string): LoadedScenario {
  const raw = setPath(base.raw, key.split('.'), typed(value));
  try {
    const loaded = parseScenario(raw, '');
    return { ...loaded, file: base.file };
  } catch (err) {
    if (err instanceof ConfigError) throw new ConfigError(err.problems.map((p) => `--vary ${key}=${value}: ${p}`));
    throw err;
  }
}
