// bisect.json, the bisect's only state: its settings (what a resume must repeat), every finished
// step with its mark and figures, the attempt under way, and the outcome. Rewritten (atomically)
// at every change, so an interrupted or killed bisect resumes from what it says. Validated when
// read: a resume trusts nothing it has not checked.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../errors.js';

export const BISECT_SCHEMA_VERSION = 1;
export const STATE_FILE = 'bisect.json';

const sha = z.string().regex(/^[0-9a-f]{40}$/, 'must be a full commit id');
const ref = z.strictObject({ ref: z.string().min(1), commit: sha });

const buildSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('spire'), replace: z.array(z.string()), goCache: z.string().nullable() }),
  z.strictObject({ kind: z.literal('command'), command: z.string().min(1) }),
]);

/** What a bisect was asked; a resume must be asked the same. */
export const bisectSettingsSchema = z.strictObject({
  scenario: z.string().min(1),
  variant: z.string().min(1),
  source: z.string().min(1),
  good: ref,
  bad: ref,
  repetitions: z.number().int().positive().nullable(),
  duration: z.string().nullable(),
  set: z.array(z.string()),
  build: buildSchema,
  keepBuilds: z.boolean(),
});
export type BisectSettings = z.output<typeof bisectSettingsSchema>;

const figuresSchema = z.strictObject({
  peakMemoryBytes: z.number().nullable(),
  memoryLimitBytes: z.number(),
  memoryMeasure: z.string(),
  oomKills: z.number(),
  okRps: z.number(),
  kubeletRequestsPerSecond: z.number().nullable(),
  repetitions: z.number(),
});

const stepSchema = z.strictObject({
  /** The attempt's number: its folder is steps/<n>-<commit>. */
  n: z.number().int().positive(),
  commit: sha,
  subject: z.string(),
  mark: z.enum(['good', 'bad', 'skip']),
  reason: z.string(),
  verdict: z.enum(['passed', 'failed', 'inconclusive']).nullable(),
  figures: figuresSchema.nullable(),
  /** The attempt's folder and its run folder, relative to the bisect's folder. */
  folder: z.string(),
  runDir: z.string().nullable(),
  build: z.strictObject({ ok: z.boolean(), seconds: z.number(), replaced: z.array(z.string()) }),
  runSeconds: z.number().nullable(),
  seconds: z.number(),
  startedAt: z.string(),
});
export type BisectStep = z.output<typeof stepSchema>;

const attemptSchema = z.strictObject({ n: z.number().int().positive(), commit: sha, folder: z.string(), startedAt: z.string() });
export type BisectAttempt = z.output<typeof attemptSchema>;

const namedCommit = z.strictObject({ commit: sha, subject: z.string() });
const outcomeSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('first-bad'), ...namedCommit.shape }),
  z.strictObject({ kind: z.literal('candidates'), commits: z.array(namedCommit) }),
  z.strictObject({ kind: z.literal('merge-base-bad'), ...namedCommit.shape }),
]);
export type BisectOutcome = z.output<typeof outcomeSchema>;

export const bisectStateSchema = z.strictObject({
  schemaVersion: z.literal(BISECT_SCHEMA_VERSION),
  /** The command line that started (or last resumed) it. */
  command: z.string(),
  settings: bisectSettingsSchema,
  runner: z.strictObject({ pid: z.number(), hostname: z.string(), startTicks: z.number().nullable() }),
  status: z.enum(['running', 'interrupted', 'complete', 'failed']),
  statusDetail: z.string().optional(),
  startedAt: z.string(),
  endedAt: z.string().nullable(),
  /** The range's size (commits in bad, not in good) when the bisect started. */
  rangeCommits: z.number().int().nonnegative(),
  /** Attempts begun, finished or not: the next one's number is this plus one. */
  attempts: z.number().int().nonnegative(),
  steps: z.array(stepSchema),
  /** The attempt under way; still set when a bisect was interrupted or killed during it. */
  current: attemptSchema.nullable(),
  /** Attempts that did not finish (their folders are kept); their commits were tested again. */
  unfinished: z.array(attemptSchema),
  outcome: outcomeSchema.nullable(),
});
export type BisectState = z.output<typeof bisectStateSchema>;

export function writeState(dir: string, state: BisectState): void {
  const file = join(dir, STATE_FILE);
  writeFileSync(`${file}.tmp`, `${JSON.stringify(state, null, 2)}\n`);
  renameSync(`${file}.tmp`, file);
}

/** The state in `dir`; null when there is none; a ConfigError naming the file when it is not a bisect's. */
export function readState(dir: string): BisectState | null {
  const file = join(dir, STATE_FILE);
  if (!existsSync(file)) return null;
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ConfigError(`${file}: not valid JSON (${(err as Error).message})`);
  }
  const parsed = bisectStateSchema.safeParse(doc);
  if (!parsed.success)
    throw new ConfigError(
      `${file}: not a bisect state this attestorm reads (${parsed.error.issues
        .slice(0, 3)
        .map((i) => `${i.path.join('.') || 'the file'}: ${i.message}`)
        .join('; ')})`,
    );
  return parsed.data;
}

/** Which settings differ between a recorded bisect and the one asked for, in flag words. */
export function settingsDifferences(recorded: BisectSettings, asked: BisectSettings): string[] {
  const out: string[] = [];
  for (const key of Object.keys(asked) as (keyof BisectSettings)[]) {
    const a = JSON.stringify(recorded[key]);
    const b = JSON.stringify(asked[key]);
    if (a !== b) out.push(`${key}: ${a} there, ${b} now`);
  }
  return out;
}
