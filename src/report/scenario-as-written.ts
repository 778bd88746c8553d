// The scenario in the user's units: what the file said ("20s", "192Mi"), and the resolved scenario
// with durations and sizes written back in those units and every value the file did not give
// marked as a default.
import { Document, isMap, isScalar, isSeq } from 'yaml';

const DURATION_KEYS = new Set([
  'duration',
  'warmup',
  'latency',
  'serviceTime',
  'visibilityDelay',
  'pollInterval',
  'deadline',
  'podLifetime',
  'initialBackoff',
  'maxBackoff',
  'resetAfter',
  'startTimeout',
]);
const SIZE_KEYS = new Set(['memoryLimit']);

export function formatDurationMs(ms: number): string {
  if (ms === 0) return '0s';
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

export function formatSize(bytes: number): string {
  for (const [unit, n] of [
    ['Gi', 2 ** 30],
    ['Mi', 2 ** 20],
    ['Ki', 2 ** 10],
  ] as const)
    if (bytes % n === 0 && bytes >= n) return `${bytes / n}${unit}`;
  return String(bytes);
}

/** Durations and sizes in the units people write them in; everything else as it is. */
export function inUserUnits(value: unknown, key: string | null = null): unknown {
  if (typeof value === 'number' && key !== null) {
    if (DURATION_KEYS.has(key)) return formatDurationMs(value);
    if (SIZE_KEYS.has(key)) return formatSize(value);
  }
  if (Array.isArray(value)) return value.map((v) => inUserUnits(v, null));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, inUserUnits(v, k)]));
  return value;
}

/** Whether `path` is given in the written scenario; a variant's agent keys also count when the shared `agent` gives them. */
function written(doc: unknown, path: (string | number)[]): boolean {
  const at = (root: unknown, p: (string | number)[]) => {
    let v = root;
    for (const k of p) {
      if (v === null || typeof v !== 'object') return undefined;
      v = (v as Record<string | number, unknown>)[k];
    }
    return v;
  };
  if (at(doc, path) !== undefined) return true;
  // variants[i].agent.<key> may come from the shared agent block or the placements shorthand.
  if (path[0] === 'variants' && path[2] === 'agent' && path.length > 3) {
    if (at(doc, ['agent', ...path.slice(3)]) !== undefined) return true;
    if (path[3] === 'placement' || path[3] === 'kind') return at(doc, ['variants']) === undefined;
  }
  if (path[0] === 'variants' && path.length <= 2) return true;
  return false;
}

/**
 * The resolved scenario as YAML in the user's units, every value the written scenario did not give
 * commented `# default`. Without the written scenario (older run folders), no marks.
 */
export function resolvedWithDefaults(resolved: unknown, asWritten: unknown): string {
  const doc = new Document(inUserUnits(resolved));
  const mark = (node: unknown, path: (string | number)[]): void => {
    if (isMap(node)) {
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : '';
        const p = [...path, key];
        if (isScalar(pair.value)) {
          if (!written(asWritten, p)) pair.value.comment = ' default';
        } else {
          mark(pair.value, p);
        }
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => mark(item, [...path, i]));
    }
  };
  if (asWritten && typeof asWritten === 'object') mark(doc.contents, []);
  return doc.toString({ lineWidth: 0 });
}
