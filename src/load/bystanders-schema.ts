// The scenario's `load.bystanders` block: well-behaved pods beside the storm (a slow open loop, one
// reused connection, backoff), whose service level is what a limiter is for. Off when absent.
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { parseOrThrow, zDuration } from '../util/index.js';
import { CONNECTION_MODES, LOAD_METHODS, RETRY_POLICIES } from './vocabulary.js';
import type { ConnectionMode, LoadMethod, RetryPolicy } from './worker/messages.js';

export const BYSTANDER_UID_MODES = ['same', 'own'] as const;
export type BystanderUidMode = (typeof BYSTANDER_UID_MODES)[number];

export const BYSTANDER_DEFAULTS = {
  pods: 1,
  workersPerPod: 1,
  rate: 1,
  deadlineMs: 5000,
  retry: 'backoff' as RetryPolicy,
  connection: 'per-worker' as ConnectionMode,
  method: 'FetchJWTSVID' as LoadMethod,
  uid: 'same' as BystanderUidMode,
};

// Bystanders are the few innocent workloads of a node, not a second storm.
export const MAX_BYSTANDER_PODS = 100;
export const MAX_BYSTANDER_WORKERS = 1000;

const posInt = (max: number) =>
  z.number({ error: 'must be a positive integer' }).int('must be a positive integer').min(1, 'must be a positive integer').max(max, `must be at most ${max}`);

export const bystandersSchema = z
  .strictObject({
    pods: posInt(MAX_BYSTANDER_PODS)
      .default(BYSTANDER_DEFAULTS.pods)
      .describe('Bystander pods: pods of their own (own pod UIDs, listed by the kubelet) beside the storm'),
    workersPerPod: posInt(MAX_BYSTANDER_WORKERS).default(BYSTANDER_DEFAULTS.workersPerPod).describe('Worker processes per bystander pod'),
    rate: z
      .number({ error: 'must be a positive number of calls per second per worker' })
      .positive('must be a positive number of calls per second per worker')
      .max(1000, 'must be at most 1000 calls per second per worker (bystanders are well-behaved)')
      .default(BYSTANDER_DEFAULTS.rate)
      .describe('Calls per second per bystander worker (open loop)'),
    deadline: zDuration
      .refine((ms) => ms >= 1 && ms <= 600_000, 'must be between 1 ms and 10 minutes')
      .default(BYSTANDER_DEFAULTS.deadlineMs)
      .describe('Client deadline of each bystander call'),
    retry: z
      .enum(RETRY_POLICIES as [RetryPolicy, ...RetryPolicy[]], { error: `must be one of ${RETRY_POLICIES.join(', ')}` })
      .default(BYSTANDER_DEFAULTS.retry)
      .describe('After a failed call: back off exponentially with jitter (as SDKs do), or retry at once'),
    connection: z
      .enum(CONNECTION_MODES as [ConnectionMode, ...ConnectionMode[]], { error: `must be one of ${CONNECTION_MODES.join(', ')}` })
      .default(BYSTANDER_DEFAULTS.connection)
      .describe('per-worker: one reused connection, as a long-lived workload holds'),
    method: z
      .enum(LOAD_METHODS as [LoadMethod, ...LoadMethod[]], { error: `must be one of ${LOAD_METHODS.join(', ')}` })
      .default(BYSTANDER_DEFAULTS.method)
      .describe('The Workload API method bystanders call (the limiter keeps one bucket per key and method)'),
    uid: z
      .enum(BYSTANDER_UID_MODES, { error: `must be one of ${BYSTANDER_UID_MODES.join(', ')}` })
      .default(BYSTANDER_DEFAULTS.uid)
      .describe(
        "OS uid of the bystander pods: same = the storm pods' uid (most pods run as the same uid, so an os-uid limiter key shares one bucket), own = a uid of their own (needs root)",
      ),
  })
  .describe('Well-behaved pods beside the storm, against the same agent, for the whole load phase; off when absent');

export type BystandersInput = z.input<typeof bystandersSchema>;
export type Bystanders = z.output<typeof bystandersSchema>;

/** Validates a `load.bystanders` block (ConfigError naming each bad key and its rule). */
export function parseBystanders(input: unknown, what = 'load.bystanders'): Bystanders {
  const b = parseOrThrow(bystandersSchema, input, what);
  if (b.uid === 'own' && typeof process.getuid === 'function' && process.getuid() !== 0) {
    throw new ConfigError(`${what}.uid "own" needs root (bystander pods run as a uid of their own), got uid ${process.getuid()}`);
  }
  return b;
}

/** What runLoad needs to drive the bystander pods (LoadOptions.bystanders). */
export interface BystanderLoadOptions {
  /** Must equal the bystander pods the sandbox hosts (SandboxOptions.bystanders.pods). */
  pods: number;
  workersPerPod?: number;
  /** Calls per second per worker. */
  rate?: number;
  deadlineMs?: number;
  retry?: RetryPolicy;
  connection?: ConnectionMode;
  method?: LoadMethod;
}

export type ResolvedBystanderLoadOptions = Required<BystanderLoadOptions>;

export const bystanderLoadSchema = z.strictObject({
  pods: posInt(MAX_BYSTANDER_PODS),
  workersPerPod: posInt(MAX_BYSTANDER_WORKERS).default(BYSTANDER_DEFAULTS.workersPerPod),
  rate: z
    .number({ error: 'must be a number' })
    .positive('must be a positive number of calls per second per worker')
    .max(1000, 'must be at most 1000')
    .default(BYSTANDER_DEFAULTS.rate),
  deadlineMs: z
    .number({ error: 'must be a number' })
    .int('must be whole milliseconds')
    .min(1, 'must be at least 1 ms')
    .max(600_000, 'must be at most 10 minutes')
    .default(BYSTANDER_DEFAULTS.deadlineMs),
  retry: z.enum(RETRY_POLICIES as [RetryPolicy, ...RetryPolicy[]], { error: `must be one of ${RETRY_POLICIES.join(', ')}` }).default(BYSTANDER_DEFAULTS.retry),
  connection: z
    .enum(CONNECTION_MODES as [ConnectionMode, ...ConnectionMode[]], { error: `must be one of ${CONNECTION_MODES.join(', ')}` })
    .default(BYSTANDER_DEFAULTS.connection),
  method: z.enum(LOAD_METHODS as [LoadMethod, ...LoadMethod[]], { error: `must be one of ${LOAD_METHODS.join(', ')}` }).default(BYSTANDER_DEFAULTS.method),
});

export function validateBystanderLoadOptions(input: unknown, what = 'load.bystanders'): ResolvedBystanderLoadOptions {
  return parseOrThrow(bystanderLoadSchema, input, what);
}

/** The scenario block as runLoad's LoadOptions.bystanders. */
export function bystanderLoadOptions(b: Bystanders): ResolvedBystanderLoadOptions {
  return { pods: b.pods, workersPerPod: b.workersPerPod, rate: b.rate, deadlineMs: b.deadline, retry: b.retry, connection: b.connection, method: b.method };
}

/** The scenario block as createSandbox's SandboxOptions.bystanders. */
export function bystanderSandboxOptions(b: Bystanders): { pods: number; uid: BystanderUidMode } {
  return { pods: b.pods, uid: b.uid };
}
