// Glue between zod schemas and attestorm's error style: unit-bearing schema types and a
// parse that reports every problem as "<path> <rule>, got <value>".
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { parseBytes, parseDurationMs } from './units.js';

/** A duration written as "30s" / "2m" / "500ms" (or a number of seconds), parsed to milliseconds. */
export const zDuration = z.union([z.string(), z.number()]).transform((v, ctx) => {
  const ms = parseDurationMs(v);
  if (ms === null) {
    ctx.addIssue({ code: 'custom', message: `must be a duration like 500ms, 30s or 2m, got ${JSON.stringify(v)}` });
    return z.NEVER;
  }
  return ms;
});

/** A size written as "128Mi" / "1Gi" / bytes, parsed to bytes. */
export const zBytes = z.union([z.string(), z.number()]).transform((v, ctx) => {
  const b = parseBytes(v);
  if (b === null) {
    ctx.addIssue({ code: 'custom', message: `must be a size like 128Mi, 1Gi or a byte count, got ${JSON.stringify(v)}` });
    return z.NEVER;
  }
  return b;
});

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  const s = JSON.stringify(value);
  return s && s.length > 60 ? `${s.slice(0, 57)}...` : String(s);
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = root;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

/** Human problems from a zod error: "load.workersPerPod must be a positive integer, got 0". */
export function formatZodIssues(error: z.ZodError, input: unknown, prefix = ''): string[] {
  return error.issues.map((issue) => {
    const path =
      [prefix, ...issue.path.map(String)]
        .filter(Boolean)
        .join('.')
        .replace(/\.(\d+)(?=\.|$)/g, '[$1]') || '(root)';
    const msg = issue.message;
    if (/, got /.test(msg)) return `${path} ${msg}`;
    if (issue.code === 'unrecognized_keys') return `${path}: unknown key(s) ${issue.keys.join(', ')}`;
    return `${path}: ${msg}, got ${describe(valueAt(input, issue.path))}`;
  });
}

/** Parse or throw a ConfigError listing every problem. `what` names the input (a file, "--flags"). */
export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown, what = ''): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const problems = formatZodIssues(result.error, input, what);
  throw new ConfigError(problems);
}

/** A positive integer; `what` is the rule as the message says it ("a positive integer"). */
export const zPosInt = (what: string) =>
  z
    .number({ error: `must be ${what}` })
    .int(`must be ${what}`)
    .positive(`must be ${what}`);
/** A non-negative integer, with the rule named as for zPosInt. */
export const zNonNegInt = (what: string) =>
  z
    .number({ error: `must be ${what}` })
    .int(`must be ${what}`)
    .min(0, `must be ${what}`);

/** A size kept as written ("200Mi") so expectations and reports can quote it; checked to parse. */
export const zSizeAsWritten = z.union([z.string(), z.number()]).superRefine((v, ctx) => {
  if (parseBytes(v) === null) ctx.addIssue({ code: 'custom', message: `must be a size like 128Mi, 1Gi or a byte count, got ${JSON.stringify(v)}` });
});
