// Registration entries: which SPIFFE IDs a caller's selectors entitle it to, read from a YAML file,
// or derived from the selectors themselves when there is no file so the agent serves out of the box.
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { spiffeIdFor, spiffeIdProblem } from './spiffe-id.js';
import type { RegistrationEntry, Selector } from './types.js';

/** "k8s:ns:default" → { type: 'k8s', value: 'ns:default' }; null when either side of the first colon is empty. */
export function parseSelector(text: string): Selector | null {
  const colon = text.indexOf(':');
  if (colon <= 0 || colon === text.length - 1) return null;
  return { type: text.slice(0, colon), value: text.slice(colon + 1) };
}

function entriesSchema(trustDomain: string) {
  const selector = z.string({ error: 'must be a "type:value" string' }).transform((text, ctx) => {
    const sel = parseSelector(text);
    if (!sel) {
      ctx.addIssue({
        code: 'custom',
        message: `must be a "type:value" selector with both sides non-empty (e.g. "k8s:ns:default"), got ${JSON.stringify(text)}`,
      });
      return z.NEVER;
    }
    return sel;
  });

  const spiffeId = z.string({ error: 'must be a spiffe://<trust domain>/<path> URI' }).superRefine((id, ctx) => {
    const problem = spiffeIdProblem(id);
    const prefix = `spiffe://${trustDomain}`;
    const message =
      problem !== null
        ? problem
        : !id.startsWith(`${prefix}/`) && id !== prefix
          ? `must be in trust domain "${trustDomain}" (the agent's CA signs no other), got ${JSON.stringify(id)}`
          : id === prefix
            ? `must have a path after the trust domain (${prefix} names the trust domain, not a workload), got ${JSON.stringify(id)}`
            : null;
    if (message !== null) ctx.addIssue({ code: 'custom', message });
  });

  const entry = z.strictObject(
    {
      spiffeId,
      // An entry without selectors would hand its identity to every caller: never what anyone means.
      selectors: z.array(selector, { error: 'must be a list of "type:value" strings' }).min(1, 'must list at least one selector'),
      hint: z.string({ error: 'must be a string' }).optional(),
    },
    { error: 'must be a mapping with spiffeId, selectors and optionally hint' },
  );

  return z.strictObject(
    {
      entries: z.array(entry, { error: 'must be a list of entries' }),
    },
    { error: 'must be a mapping with a top-level "entries" list' },
  );
}

function pathText(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) out += typeof key === 'number' ? `[${key}]` : `${out ? '.' : ''}${String(key)}`;
  return out;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v = root;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  const s = JSON.stringify(value) ?? String(value);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

/** Entries from YAML text; `file` names the input in every problem ("entries.yaml: entries[2].spiffeId ..."). */
export function parseEntries(text: string, file: string, trustDomain: string): RegistrationEntry[] {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new ConfigError(`${file}: not valid YAML (${(err as Error).message.split('\n')[0]!.replace(/:$/, '')})`);
  }
  const result = entriesSchema(trustDomain).safeParse(doc);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => {
      const where = pathText(issue.path);
      const head = where ? `${file}: ${where}` : file;
      if (issue.code === 'unrecognized_keys') return `${head}: unknown key(s) ${issue.keys.join(', ')}`;
      if (/, got /.test(issue.message)) return `${head} ${issue.message}`;
      return `${head} ${issue.message}, got ${describe(valueAt(doc, issue.path))}`;
    });
    throw new ConfigError(problems);
  }
  return result.data.entries.map((e) =>
    e.hint === undefined ? { spiffeId: e.spiffeId, selectors: e.selectors } : { spiffeId: e.spiffeId, selectors: e.selectors, hint: e.hint },
  );
}

/** Reads and validates an entries file (the agent config's `entries` key). */
export async function readEntriesFile(path: string, trustDomain: string): Promise<RegistrationEntry[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`entries ${path}: cannot read the file (${(err as Error).message})`);
  }
  return parseEntries(text, path, trustDomain);
}

// NUL cannot occur in a selector type from an attestor, so type/value pairs cannot collide.
const selectorKey = (s: Selector): string => `${s.type}\u0000${s.value}`;

/** The entries all of whose selectors are among the caller's, in file order. */
export function matchEntries(entries: readonly RegistrationEntry[], callerSelectors: readonly Selector[]): RegistrationEntry[] {
  if (entries.length === 0 || callerSelectors.length === 0) return [];
  const have = new Set(callerSelectors.map(selectorKey));
  return entries.filter((e) => e.selectors.every((s) => have.has(selectorKey(s))));
}

function firstValue(selectors: readonly Selector[], type: string, prefix: string): string | undefined {
  for (const s of selectors) {
    if (s.type === type && s.value.startsWith(prefix) && s.value.length > prefix.length) return s.value.slice(prefix.length);
  }
  return undefined;
}

function derived(trustDomain: string, selectors: Selector[], ...segments: string[]): RegistrationEntry | null {
  try {
    return { spiffeId: spiffeIdFor(trustDomain, ...segments).id, selectors };
  } catch (err) {
    // A selector value that cannot be a path segment gives no ID rather than an invalid one.
    if (err instanceof ConfigError) return null;
    throw err;
  }
}

/**
 * The entry a caller gets when there is no entries file: spiffe://<td>/ns/<ns>/sa/<sa> for a pod,
 * else spiffe://<td>/uid/<uid>, else none. The entry's selectors are the ones the ID came from,
 * so it also satisfies matchEntries for the same caller.
 */
export function deriveEntries(trustDomain: string, callerSelectors: readonly Selector[]): RegistrationEntry[] {
  const ns = firstValue(callerSelectors, 'k8s', 'ns:');
  const sa = firstValue(callerSelectors, 'k8s', 'sa:');
  if (ns !== undefined && sa !== undefined) {
    const entry = derived(
      trustDomain,
      [
        { type: 'k8s', value: `ns:${ns}` },
        { type: 'k8s', value: `sa:${sa}` },
      ],
      'ns',
      ns,
      'sa',
      sa,
    );
    if (entry) return [entry];
  }
  const uid = firstValue(callerSelectors, 'unix', 'uid:');
  if (uid !== undefined) {
    const entry = derived(trustDomain, [{ type: 'unix', value: `uid:${uid}` }], 'uid', uid);
    if (entry) return [entry];
  }
  return [];
}
