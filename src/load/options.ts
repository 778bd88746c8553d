// The load generator's options: one zod schema, shared by the programmatic API, the CLI flags and
// scenario YAML, validated before any process starts.
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { parseOrThrow } from '../util/index.js';
import { bystanderLoadSchema, type BystanderLoadOptions, type ResolvedBystanderLoadOptions } from './bystanders-schema.js';
import { CONNECTION_MODES, LOAD_CLIENTS, LOAD_METHODS, RETRY_POLICIES } from './vocabulary.js';
import type { ConnectionMode, LoadClient, LoadMethod, RetryPolicy } from './worker/messages.js';

export type { ConnectionMode, LoadClient, LoadMethod, RetryPolicy } from './worker/messages.js';

export { CONNECTION_MODES, LOAD_CLIENTS, LOAD_METHODS, RETRY_POLICIES };

/** Shown by the CLI and kept on the schema. */
export const CLIENT_DESCRIPTION =
  "Workers' gRPC client: h2 = gRPC written on node:http2 (a few MiB less per worker, more calls per CPU-second), grpc-js = a real @grpc/grpc-js client as applications use it, native = a small C program per worker (HTTP/2 by hand; built with the system cc on first use and cached, or built into the project's image for cluster runs; without either h2 runs instead, with the reason in results.json)";

/**
 * The one table of load defaults: the generator's options, `attestorm load`'s flags and the
 * scenario's `load` block all take theirs from here, so they cannot drift apart.
 */
export const LOAD_DEFAULTS = {
  pods: 1,
  workersPerPod: 10,
  durationMs: 30_000,
  connection: 'per-call' as ConnectionMode,
  client: 'h2' as LoadClient,
  deadlineMs: 1000,
  retry: 'immediate' as RetryPolicy,
  audience: 'attestorm',
  methods: { FetchJWTSVID: 1 } as Partial<Record<LoadMethod, number>>,
  uidMode: 'same' as 'same' | 'per-pod',
  cgroupDriver: 'cgroupfs' as 'cgroupfs' | 'systemd',
};

/** What each load setting means, shown by the CLI and kept in the scenario's JSON schema. */
export const LOAD_DESCRIPTIONS = {
  pods: 'Pods to run (short-lived pods on the emulated node)',
  workersPerPod: 'Forked worker processes per pod, each a separate caller with its own PID',
  connection: 'per-call: a fresh connection for every call (the storm); per-worker: one reused connection; per-retry: a fresh one after each failure',
  client: CLIENT_DESCRIPTION,
  rate: 'Calls per second per worker (open loop, latency corrected for coordinated omission); absent = closed loop (a tight loop)',
  deadline: 'Client deadline of each call; an abandoned call is retried',
  retry: 'After a failed call: retry at once, or back off exponentially with full jitter (100ms base, 5s cap)',
  methods: 'Method mix: weights per Workload API method',
  audience: 'Audience of JWT-SVID requests',
  podLifetime: 'Each pod is replaced by a new one (new UID, not yet visible to the kubelet) after this long',
  uidMode: 'OS uid of pods: all the same, or one per pod (needs root)',
  cgroupDriver: "Kubelet cgroup naming of the pods' cgroups",
} as const;

// Bounds keep a typo from forking 100 000 processes or running for a week.
export const MAX_WORKERS_TOTAL = 5000;

export interface LoadOptions {
  /** Unix socket path of any Workload API server (reference agent or a real SPIRE agent). */
  socket: string;
  pods: number;
  workersPerPod: number;
  /** Load phase length; the run stops by itself. */
  durationMs: number;
  connection?: ConnectionMode;
  /** The workers' gRPC client, default h2 (see CLIENT_DESCRIPTION). */
  client?: LoadClient;
  /** Calls per second per worker; absent = closed loop. */
  rate?: number;
  /** Per-call deadline, default 1000. */
  deadlineMs?: number;
  retry?: RetryPolicy;
  /** Method weights, e.g. { FetchJWTSVID: 9, ValidateJWTSVID: 1 }; default { FetchJWTSVID: 1 }. */
  methods?: Partial<Record<LoadMethod, number>>;
  audience?: string;
  /** Optional overall bound on the number of calls (the storm's). */
  maxCalls?: number;
  /**
   * Well-behaved pods beside the storm, counted apart from it (LoadSummary.bystanders); the
   * sandbox must host as many bystander pods (SandboxOptions.bystanders).
   */
  bystanders?: BystanderLoadOptions;
}

export type ResolvedLoadOptions = Required<Omit<LoadOptions, 'rate' | 'maxCalls' | 'bystanders'>> &
  Pick<LoadOptions, 'rate' | 'maxCalls'> & { bystanders?: ResolvedBystanderLoadOptions };

const positiveInt = (max: number) =>
  z.number({ error: 'must be a number' }).int('must be an integer').min(1, 'must be at least 1').max(max, `must be at most ${max}`);

export const loadOptionsSchema = z
  .strictObject({
    socket: z.string({ error: 'must be a path' }).min(1, 'must be a non-empty path').max(107, 'must be at most 107 bytes (the Unix socket path limit)'),
    pods: positiveInt(1000).default(LOAD_DEFAULTS.pods),
    workersPerPod: positiveInt(MAX_WORKERS_TOTAL).default(LOAD_DEFAULTS.workersPerPod),
    durationMs: z
      .number()
      .int('must be whole milliseconds')
      .min(100, 'must be at least 100 ms')
      .max(24 * 3_600_000, 'must be at most 24 h')
      .default(LOAD_DEFAULTS.durationMs),
    connection: z
      .enum(CONNECTION_MODES as [ConnectionMode, ...ConnectionMode[]], { error: `must be one of ${CONNECTION_MODES.join(', ')}` })
      .default(LOAD_DEFAULTS.connection),
    client: z
      .enum(LOAD_CLIENTS as [LoadClient, ...LoadClient[]], { error: `must be one of ${LOAD_CLIENTS.join(', ')}` })
      .default(LOAD_DEFAULTS.client)
      .describe(CLIENT_DESCRIPTION),
    rate: z.number().positive('must be a positive number of calls per second per worker').max(100_000, 'must be at most 100000').optional(),
    deadlineMs: z
      .number()
      .int('must be whole milliseconds')
      .min(1, 'must be at least 1 ms')
      .max(600_000, 'must be at most 10 minutes')
      .default(LOAD_DEFAULTS.deadlineMs),
    retry: z.enum(RETRY_POLICIES as [RetryPolicy, ...RetryPolicy[]], { error: `must be one of ${RETRY_POLICIES.join(', ')}` }).default(LOAD_DEFAULTS.retry),
    methods: z
      .partialRecord(
        z.enum(LOAD_METHODS as [LoadMethod, ...LoadMethod[]], { error: `must name Workload API methods (${LOAD_METHODS.join(', ')})` }),
        z.number().int('weight must be an integer').min(0, 'weight must be >= 0').max(1_000_000),
      )
      .refine((m) => Object.values(m).some((w) => (w ?? 0) > 0), 'must give at least one method a weight above 0')
      .default(LOAD_DEFAULTS.methods),
    audience: z.string().min(1, 'must be non-empty (the Workload API rejects FetchJWTSVID without an audience)').max(1024).default(LOAD_DEFAULTS.audience),
    maxCalls: positiveInt(Number.MAX_SAFE_INTEGER).optional(),
    bystanders: bystanderLoadSchema.optional(),
  })
  .superRefine((o, ctx) => {
    if (o.pods * o.workersPerPod > MAX_WORKERS_TOTAL) {
      ctx.addIssue({
        code: 'custom',
        path: ['workersPerPod'],
        message: `pods × workersPerPod must be at most ${MAX_WORKERS_TOTAL} processes, got ${o.pods} × ${o.workersPerPod}`,
      });
    }
  });

/** Validates (and fills defaults into) load options; a ConfigError lists every problem. */
export function validateLoadOptions(input: unknown, what = 'load'): ResolvedLoadOptions {
  return parseOrThrow(loadOptionsSchema, input, what) as ResolvedLoadOptions;
}

/**
 * Parses a method mix from flags: ["FetchJWTSVID=9", "ValidateJWTSVID=1"] or ["FetchJWTSVID"]
 * (weight 1). Names are checked by the schema; this only splits the text.
 */
export function parseMethodMix(items: readonly string[], flag = '--method'): Partial<Record<LoadMethod, number>> {
  const mix: Record<string, number> = {};
  const problems: string[] = [];
  for (const raw of items
    .flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^([A-Za-z0-9]+)(?:=(\d+))?$/.exec(raw);
    if (!m) {
      problems.push(`${flag} must be Method or Method=weight (e.g. FetchJWTSVID=9), got ${JSON.stringify(raw)}`);
      continue;
    }
    if (!(LOAD_METHODS as readonly string[]).includes(m[1]!)) {
      problems.push(`${flag} must name one of ${LOAD_METHODS.join(', ')}, got ${JSON.stringify(m[1])}`);
      continue;
    }
    mix[m[1]!] = (mix[m[1]!] ?? 0) + (m[2] === undefined ? 1 : Number(m[2]));
  }
  if (problems.length) throw new ConfigError(problems);
  return mix;
}
