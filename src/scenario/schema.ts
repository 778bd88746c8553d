// The scenario file's schema: one zod definition that validates YAML, fills defaults, generates
// scenarios/scenario.schema.json for editors, and supplies the `attestorm run` flag overrides.
import { z } from 'zod';
import type { PlacementName } from '../contract/index.js';
import { ConfigError } from '../errors.js';
import { faultsSchema } from '../fault/index.js';
import {
  bystanderExpectIssues,
  bystanderExpectShape,
  bystandersSchema,
  CONNECTION_MODES,
  LOAD_CLIENTS,
  LOAD_DEFAULTS,
  LOAD_DESCRIPTIONS,
  LOAD_METHODS,
  RETRY_POLICIES,
  type ConnectionMode,
  type LoadClient,
  type LoadMethod,
  type RetryPolicy,
} from '../load/index.js';
import { parseBytes, zBytes, zDuration } from '../util/index.js';
import { podListConflict, podListSchema } from './schema-pod-list.js';

export const PLACEMENT_NAMES = ['pre-attestation', 'post-attestation', 'disabled'] as const;
/** The single column used when the target is an external agent: placements then mean nothing. */
export const EXTERNAL_PLACEMENT = 'external' as const;
export const EXPECT_KEYS = [...PLACEMENT_NAMES, EXTERNAL_PLACEMENT] as const;

const posInt = (what: string) => z.number({ error: `must be ${what}` }).int(`must be ${what}`).positive(`must be ${what}`);
const nonNegInt = (what: string) => z.number({ error: `must be ${what}` }).int(`must be ${what}`).min(0, `must be ${what}`);

/** A size kept as written ("200Mi") so expectations can quote it; checked to parse. */
const zSizeAsWritten = z.union([z.string(), z.number()]).superRefine((v, ctx) => {
  if (parseBytes(v) === null) ctx.addIssue({ code: 'custom', message: `must be a size like 128Mi, 1Gi or a byte count, got ${JSON.stringify(v)}` });
});

const cpuSchema = z
  .strictObject({
    mode: z
      .enum(['cgroup', 'nice', 'none'])
      .default('cgroup')
      .describe('How the agent is given its CPU share against the load workers: cgroup = cpu weight of its cgroup (cpu.weight / cpu.shares, also set on the run\'s parent cgroups), nice = a process priority, none = left to the scheduler'),
    weight: z
      .number()
      .int()
      .min(1)
      .max(10000)
      .default(1000)
      .describe('cgroup mode: the agent\'s cpu weight (cgroup v2 scale, 100 = default; v1 cpu.shares = weight × 10.24)'),
    nice: z.number().int().min(-20).max(19).default(-10).describe('nice mode: the agent\'s nice value (negative = favoured; needs root)'),
  })
  .describe('CPU share of the agent relative to the workers; on 2 cores hundreds of workers would otherwise starve it');

const kubeletSchema = z
  .strictObject({
    latency: zDuration.default(0).describe('Extra latency of every kubelet GET /pods answer'),
    serviceTime: zDuration
      .default(0)
      .describe('Time the kubelet spends on each GET /pods answer, one request at a time (first come, first served), on top of latency: 0 = every answer takes just the latency; under a storm the queue grows and every later answer waits for the ones before it, including those whose caller gave up'),
    failureRate: z.number().min(0).max(1).default(0).describe('Fraction of kubelet requests answered with HTTP 500'),
    visibilityDelay: zDuration
      .default(0)
      .describe('How long a new pod stays missing from the kubelet\'s /pods list; attestations of its callers poll meanwhile'),
    fillerPods: nonNegInt('a non-negative integer')
      .optional()
      .describe('Other pods on the emulated node, padding the /pods document (about 1 MiB at 110 pods); default: up to the kubelet\'s 110'),
    tls: z.boolean().default(false).describe('Serve the kubelet API over HTTPS with a per-run self-signed CA'),
    token: z.string().min(1).optional().describe('Bearer token the kubelet requires (written to a token file the agent reads)'),
    podList: podListSchema.optional(),
  })
  .superRefine((k, ctx) => {
    const problem = podListConflict(k);
    if (problem) ctx.addIssue({ code: 'custom', path: ['podList', 'pods'], message: problem });
  })
  .describe('The kubelet emulator the k8s attestor talks to');

const k8sSchema = z
  .strictObject({
    pollInterval: zDuration.default(500).describe('Minimum time between kubelet fetches while a caller\'s pod is not listed yet'),
    maxPollAttempts: posInt('a positive integer').default(60).describe('Kubelet fetches before an attestation gives up on an unlisted pod'),
    shareFetches: z
      .boolean()
      .default(true)
      .describe('One in-flight GET /pods shared by all waiting attestations (modern agents); false: each attestation attempt fetches and parses its own ~1 MiB copy (older agents, the first memory mechanism of the brief)'),
  })
  .describe('k8s attestor settings of the reference agent');

const rateLimitsSchema = z
  .strictObject({
    fetch_x509_svid: nonNegInt('a non-negative integer').default(0).describe('FetchX509SVID stream opens per second per key; 0 = unlimited'),
    fetch_jwt_svid: nonNegInt('a non-negative integer').default(10).describe('FetchJWTSVID calls per second per key; 0 = unlimited'),
    fetch_x509_bundles: nonNegInt('a non-negative integer').default(0).describe('FetchX509Bundles stream opens per second per key; 0 = unlimited'),
    fetch_jwt_bundles: nonNegInt('a non-negative integer').default(0).describe('FetchJWTBundles stream opens per second per key; 0 = unlimited'),
  })
  .describe('Token-bucket limits per method (SPIRE\'s config keys): rate = burst = the integer given');

const keysSchema = z
  .strictObject({
    'pre-attestation': z.enum(['pod-uid', 'os-uid']).default('pod-uid').describe('Limiter key before attestation'),
    'post-attestation': z
      .enum(['selector-set', 'spiffe-id', 'pod-uid', 'os-uid'])
      .default('selector-set')
      .describe('Limiter key after attestation'),
  })
  .describe('Limiter key strategy per placement');

const modelSchema = z
  .strictObject({
    attestationWorkingSet: zSizeAsWritten
      .optional()
      .describe('Modeled cost, off unless set: bytes each in-flight attestation holds until it ends; reports name it'),
    podListWorkingSet: zSizeAsWritten
      .optional()
      .describe('Modeled cost, off unless set: bytes each parsed kubelet pod list holds while the agent references it, standing in for a heavier parser (SPIRE\'s parse tree of a ~1 MiB /pods answer measured ~22 MB of Go heap; JSON.parse ~2 MiB); reports name it'),
    cancelAbandoned: z
      .boolean()
      .optional()
      .describe('An attestation ends when its caller goes away, as in SPIRE (the agent\'s default, true); false: older agents that keep attesting for callers who gave up. Reports name it when set'),
  })
  .describe('Modeled costs and behaviours of the reference agent, named in reports when set');

const restartSchema = z
  .strictObject({
    initialBackoff: zDuration.default(10_000).describe('Delay before the first restart after the agent dies (kubelet: 10s)'),
    maxBackoff: zDuration.default(300_000).describe('Cap of the doubling restart delay (kubelet: 5m)'),
    resetAfter: zDuration
      .default(600_000)
      .describe('An agent that ran this long without dying resets the back-off (kubelet: 10m)'),
  })
  .describe('Restarting the agent after it dies, as a kubelet would');

const commonAgentShape = {
  memoryLimit: zBytes.default(128 * 2 ** 20).describe('Memory limit of the agent\'s cgroup (like the pod\'s resources.limits.memory)'),
  cpu: cpuSchema.default(cpuSchema.parse({})),
  kubelet: kubeletSchema.default(kubeletSchema.parse({})),
  restart: restartSchema.default(restartSchema.parse({})),
  startTimeout: zDuration.default(30_000).describe('How long the agent may take to become ready'),
};

const referenceOnlyShape = {
  attestors: z.array(z.enum(['unix', 'k8s'])).min(1).default(['k8s']).describe('Workload attestors of the reference agent, in order'),
  k8s: k8sSchema.default(k8sSchema.parse({})),
  rateLimits: rateLimitsSchema.default(rateLimitsSchema.parse({})),
  rejectStatus: z
    .enum(['unavailable', 'resource-exhausted'])
    .default('unavailable')
    .describe('Status of a rejected call: unavailable (SPIRE\'s merged design) or resource-exhausted (the proposal)'),
  keys: keysSchema.default(keysSchema.parse({})),
  model: modelSchema.default({}),
  extra: z
    .record(z.string(), z.unknown())
    .default({})
    .describe('Extra reference-agent config, deep-merged into the generated agent YAML (see `attestorm agent --help`)'),
};

export const KEY_STRATEGIES = ['pod-uid', 'os-uid', 'selector-set', 'spiffe-id'] as const;

/** The reference agent (src/agent): its limiter placement is the variant's choice. */
export const referenceAgentSchema = z
  .strictObject({
    kind: z.literal('reference'),
    placement: z.enum(PLACEMENT_NAMES, { error: `must be one of ${PLACEMENT_NAMES.join(', ')} for a reference agent` }).describe('Where the rate limiter sits: before attestation, after it, or nowhere'),
    key: z.enum(KEY_STRATEGIES).optional().describe('Limiter key strategy; default agent.keys[placement]'),
    ...commonAgentShape,
    ...referenceOnlyShape,
  })
  .superRefine((a, ctx) => {
    if (a.placement === 'pre-attestation' && a.key !== undefined && a.key !== 'pod-uid' && a.key !== 'os-uid') {
      ctx.addIssue({ code: 'custom', path: ['key'], message: `must be pod-uid or os-uid before attestation (nothing else is known yet), got "${a.key}"` });
    }
  });

export const SPIRE_RATE_LIMIT_KEYS = ['fetch_x509_svid', 'fetch_jwt_svid', 'fetch_x509_bundles', 'fetch_jwt_bundles', 'stream_secrets', 'fetch_secrets'] as const;
const spireRateLimitsSchema = z
  .strictObject({
    fetch_x509_svid: nonNegInt('a non-negative integer').optional(),
    fetch_jwt_svid: nonNegInt('a non-negative integer').optional(),
    fetch_x509_bundles: nonNegInt('a non-negative integer').optional(),
    fetch_jwt_bundles: nonNegInt('a non-negative integer').optional(),
    stream_secrets: nonNegInt('a non-negative integer').optional(),
    fetch_secrets: nonNegInt('a non-negative integer').optional(),
  })
  .describe('SPIRE\'s agent.experimental.ratelimit block (calls or stream opens per second per selector set); never inherited from the shared agent');

/** A real spire-agent (with its own spire-server), run from the user's binaries. */
export const spireAgentSchema = z.strictObject({
  kind: z.literal('spire'),
  ...commonAgentShape,
  k8s: z
    .strictObject({
      pollInterval: zDuration.default(500).describe('poll_retry_interval of SPIRE\'s k8s workload attestor'),
      maxPollAttempts: posInt('a positive integer').default(60).describe('max_poll_attempts of SPIRE\'s k8s workload attestor'),
    })
    .default({ pollInterval: 500, maxPollAttempts: 60 })
    .describe('SPIRE k8s workload attestor settings'),
  binDir: z.string().min(1).optional().describe('Folder with spire-server and spire-agent; default $SPIRE_BIN_DIR, then PATH'),
  binDirEnv: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name (letters, digits, "_")')
    .optional()
    .describe('Environment variable naming this variant\'s binary folder (binDir wins when both are given); when it is unset or empty the variant is skipped, named with the reason, and the others run'),
  release: z
    .string()
    .regex(/^\d+\.\d+\.\d+$/, 'must be a SPIRE version such as 1.15.3')
    .optional()
    .describe('The SPIRE release this variant means: the agent\'s --version must name it, checked before anything starts'),
  limiterPlacement: z
    .enum(['post-attestation', 'pre-attestation'])
    .default('post-attestation')
    .describe('Where this build\'s Workload API limiter sits: post-attestation (SPIRE as released, keyed by the selector set) or pre-attestation (a build with the limiter moved before attestation, keyed by pod UID, else OS uid, which must say so in its "rate limiting enabled" log line)'),
  rateLimits: spireRateLimitsSchema.optional(),
  extraAgentConfig: z.record(z.string(), z.unknown()).default({}).describe('Extra spire-agent config (the agent block and plugins), deep-merged into the generated config'),
  extraServerConfig: z.record(z.string(), z.unknown()).default({}).describe('Extra spire-server config, deep-merged into the generated config'),
  heapProfiles: zDuration
    .refine((ms) => ms >= 1000, 'must be at least 1s')
    .optional()
    .describe('Every this often, the agent\'s Go heap profile is saved to the repetition\'s folder (spire-heap-<t>ms.pb.gz, for go tool pprof): turns on SPIRE\'s profiling endpoint on a loopback port. Off when absent'),
});

/** An agent already running, storm only (no restarts, no limiter choice). */
export const externalAgentSchema = z
  .strictObject({
    kind: z.literal('external'),
    socket: z.string({ error: 'must name the running agent\'s Workload API socket' }).min(1).describe('Workload API socket of an already running agent'),
    pid: posInt('a positive integer').optional().describe('PID of that agent, to sample VmRSS/VmHWM and notice its death'),
    cgroup: z.string().min(1).optional().describe('Absolute memory cgroup directory of that agent, to sample usage, peak and OOM kills'),
    memoryLimit: zBytes.optional().describe('Limit to report for it when the cgroup has none'),
  })
  .superRefine((t, ctx) => {
    if (t.pid === undefined && t.cgroup === undefined) {
      ctx.addIssue({ code: 'custom', message: 'must name the agent\'s pid or cgroup so its memory can be sampled, got neither', path: [] });
    }
  });

export type ReferenceAgent = z.output<typeof referenceAgentSchema>;
export type SpireAgent = z.output<typeof spireAgentSchema>;
export type ExternalAgent = z.output<typeof externalAgentSchema>;
export type VariantAgent = ReferenceAgent | SpireAgent | ExternalAgent;
export interface Variant {
  name: string;
  agent: VariantAgent;
}

export const AGENT_KINDS = ['reference', 'spire', 'external'] as const;
/** Which keys of the shared `agent` block a variant of each kind inherits. */
const INHERITED: Record<(typeof AGENT_KINDS)[number], readonly string[]> = {
  reference: [...Object.keys(commonAgentShape), ...Object.keys(referenceOnlyShape)],
  // A SPIRE variant's limiter is part of what is compared: rateLimits is never inherited.
  spire: [...Object.keys(commonAgentShape), 'k8s', 'binDir', 'extraAgentConfig', 'extraServerConfig', 'heapProfiles'],
  external: ['memoryLimit', 'socket', 'pid', 'cgroup'],
};
const KIND_SCHEMAS = { reference: referenceAgentSchema, spire: spireAgentSchema, external: externalAgentSchema } as const;

/**
 * Shared agent settings (and the agent of the `placements` shorthand): keys of every kind are
 * accepted here, as written; each variant takes the keys its kind understands and overrides them.
 */
const agentInputSchema = z
  .strictObject({
    kind: z.enum(AGENT_KINDS).optional().describe('reference (default): the project\'s agent; spire: real spire-agent + spire-server; external: an agent already running'),
    placement: z.enum(PLACEMENT_NAMES).optional().describe('reference: where the rate limiter sits'),
    key: z.enum(KEY_STRATEGIES).optional().describe('reference: limiter key strategy; default agent.keys[placement]'),
    memoryLimit: zSizeAsWritten.optional().describe('Memory limit of the agent\'s cgroup (like the pod\'s resources.limits.memory); default 128Mi'),
    cpu: z.record(z.string(), z.unknown()).optional().describe(cpuSchema.description ?? ''),
    kubelet: z.record(z.string(), z.unknown()).optional().describe(kubeletSchema.description ?? ''),
    restart: z.record(z.string(), z.unknown()).optional().describe(restartSchema.description ?? ''),
    startTimeout: z.union([z.string(), z.number()]).optional().describe('How long the agent may take to become ready; default 30s'),
    attestors: z.array(z.enum(['unix', 'k8s'])).optional().describe('reference: workload attestors, in order; default [k8s]'),
    k8s: z.record(z.string(), z.unknown()).optional().describe(k8sSchema.description ?? ''),
    rateLimits: z.record(z.string(), z.unknown()).optional().describe('Token-bucket limits per method (SPIRE\'s config keys): rate = burst = the integer given; 0 = unlimited. reference default: fetch_jwt_svid 10; spire: never inherited'),
    rejectStatus: z.enum(['unavailable', 'resource-exhausted']).optional().describe('reference: status of a rejected call'),
    keys: z.record(z.string(), z.unknown()).optional().describe(keysSchema.description ?? ''),
    model: z.record(z.string(), z.unknown()).optional().describe(modelSchema.description ?? ''),
    extra: z.record(z.string(), z.unknown()).optional().describe('reference: extra agent config, deep-merged into the generated agent YAML'),
    binDir: z.string().min(1).optional().describe('spire: folder with spire-server and spire-agent; default $SPIRE_BIN_DIR, then PATH'),
    binDirEnv: z.string().min(1).optional().describe('spire: environment variable naming the binary folder; unset: the variant is skipped'),
    release: z.string().min(1).optional().describe('spire: the SPIRE release the agent\'s --version must name'),
    limiterPlacement: z.string().min(1).optional().describe('spire: where the build\'s limiter sits (post-attestation as released, pre-attestation for a patched build)'),
    extraAgentConfig: z.record(z.string(), z.unknown()).optional().describe('spire: extra spire-agent config, deep-merged'),
    extraServerConfig: z.record(z.string(), z.unknown()).optional().describe('spire: extra spire-server config, deep-merged'),
    heapProfiles: z.union([z.string(), z.number()]).optional().describe('spire: save the agent\'s Go heap profile this often (e.g. 5s)'),
    socket: z.string().min(1).optional().describe('external: Workload API socket of an already running agent'),
    pid: posInt('a positive integer').optional().describe('external: PID of that agent'),
    cgroup: z.string().min(1).optional().describe('external: absolute memory cgroup directory of that agent'),
  })
  .describe('Agent settings, checked per variant against the rules of its kind');

const variantNameSchema = z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'must be lowercase letters, digits and "-"');
const variantInputSchema = z
  .strictObject({
    name: variantNameSchema.describe('Name of this variant: a column of the comparison, a key of `expect`'),
    agent: agentInputSchema.default({}).describe('Settings merged over the scenario\'s shared `agent` block'),
  })
  .describe('One agent configuration to storm');

type AgentInput = z.output<typeof agentInputSchema>;

/**
 * One variant's agent: the shared block's keys its kind understands, the variant's own on top,
 * checked against that kind's strict schema. Problems are reported with `where` as their path.
 */
export function resolveVariantAgent(shared: AgentInput, own: AgentInput, where: (string | number)[], ctx: z.RefinementCtx): VariantAgent | null {
  const kind = own.kind ?? shared.kind ?? 'reference';
  const inherited: Record<string, unknown> = {};
  for (const k of INHERITED[kind]) if ((shared as Record<string, unknown>)[k] !== undefined) inherited[k] = (shared as Record<string, unknown>)[k];
  if (kind === 'spire' && inherited.k8s) {
    const { shareFetches: _ignored, ...rest } = inherited.k8s as Record<string, unknown>;
    inherited.k8s = rest;
  }
  const merged = deepMergePlain(inherited, { ...own, kind } as Record<string, unknown>);
  const parsed = KIND_SCHEMAS[kind].safeParse(merged);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) {
    const path = [...where, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
    if (issue.code === 'unrecognized_keys') {
      for (const k of issue.keys) ctx.addIssue({ code: 'custom', path: [...path, k], message: `is not a setting of a ${kind} agent, got ${JSON.stringify((merged as Record<string, unknown>)[k])}` });
    } else {
      ctx.addIssue({ code: 'custom', path, message: issue.message });
    }
  }
  return null;
}

function deepMergePlain(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const plain = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined) continue;
    out[k] = plain(v) && plain(out[k]) ? deepMergePlain(out[k] as Record<string, unknown>, v) : v;
  }
  return out;
}

const methodNames = LOAD_METHODS as unknown as readonly [LoadMethod, ...LoadMethod[]];

// Defaults and descriptions come from the load generator's table, as do `attestorm load`'s flags.
const loadSchema = z
  .strictObject({
    pods: posInt('a positive integer').default(LOAD_DEFAULTS.pods).describe(LOAD_DESCRIPTIONS.pods),
    workersPerPod: posInt('a positive integer').default(LOAD_DEFAULTS.workersPerPod).describe(LOAD_DESCRIPTIONS.workersPerPod),
    connection: z
      .enum(CONNECTION_MODES as unknown as readonly [ConnectionMode, ...ConnectionMode[]])
      .default(LOAD_DEFAULTS.connection)
      .describe(LOAD_DESCRIPTIONS.connection),
    client: z
      .enum(LOAD_CLIENTS as unknown as readonly [LoadClient, ...LoadClient[]])
      .default(LOAD_DEFAULTS.client)
      .describe(LOAD_DESCRIPTIONS.client),
    rate: z.number().positive('must be a positive number').optional().describe(LOAD_DESCRIPTIONS.rate),
    deadline: zDuration.default(LOAD_DEFAULTS.deadlineMs).describe(LOAD_DESCRIPTIONS.deadline),
    retry: z
      .enum(RETRY_POLICIES as unknown as readonly [RetryPolicy, ...RetryPolicy[]])
      .default(LOAD_DEFAULTS.retry)
      .describe(LOAD_DESCRIPTIONS.retry),
    methods: z
      .partialRecord(z.enum(methodNames), z.number().int('must be a positive integer weight').positive('must be a positive integer weight'))
      .default(LOAD_DEFAULTS.methods)
      .describe(LOAD_DESCRIPTIONS.methods),
    audience: z.string().min(1).default(LOAD_DEFAULTS.audience).describe(LOAD_DESCRIPTIONS.audience),
    podLifetime: zDuration.optional().describe(LOAD_DESCRIPTIONS.podLifetime),
    uidMode: z.enum(['same', 'per-pod']).default(LOAD_DEFAULTS.uidMode).describe(LOAD_DESCRIPTIONS.uidMode),
    cgroupDriver: z.enum(['cgroupfs', 'systemd']).default(LOAD_DEFAULTS.cgroupDriver).describe(LOAD_DESCRIPTIONS.cgroupDriver),
    bystanders: bystandersSchema.optional(),
  })
  .describe('The storm: identical for every variant');

const ratioSchema = z.strictObject({
  to: variantNameSchema.describe('The variant to compare with'),
  value: z.number().positive('must be a positive number').describe('The ratio of peak memories'),
});

const expectSchema = z
  .strictObject({
    ...bystanderExpectShape,
    oomKilled: z.boolean().optional().describe('Whether the agent must (true) or must not (false) be OOM-killed'),
    maxPeakMemory: zSizeAsWritten.optional().describe('Peak memory at most this'),
    minPeakMemory: zSizeAsWritten.optional().describe('Peak memory at least this'),
    minOfferedRps: z
      .number()
      .positive('must be a positive number of calls per second')
      .optional()
      .describe(
        "The storm intensity this variant's shape needs: calls the workers started per second at least this. A precondition, not a threshold: below it the generator, the machine or a neighbour held the storm back, and the variant is inconclusive with the measured numbers (never failed, never passed)",
      ),
    minAgentCpuCores: z
      .number()
      .positive('must be a positive number of cores')
      .optional()
      .describe(
        "The CPU this variant's shape needs its agent to get, in cores on average over the load phase. A precondition like minOfferedRps: when the machine was saturated (every core busy) and the agent got less, neighbours took its CPU and the variant is inconclusive with the numbers; on a machine with CPU to spare a starved agent is its own doing and its rules are judged",
      ),
    minOkRps: z.number().min(0).optional().describe('Successful calls per second at least this (an absolute rate: it depends on the machine; prefer minAdmittedSuccess)'),
    minAdmittedSuccess: z
      .number({ error: 'must be a ratio between 0 and 1' })
      .min(0, 'must be a ratio between 0 and 1')
      .max(1, 'must be a ratio between 0 and 1')
      .optional()
      .describe(
        'Of the storm calls the agent admitted (every call but rate-limit rejections), the share that succeeded, at least this (0..1): the agent keeps serving what its limiter lets through, whatever the machine\'s speed',
      ),
    maxErrorRps: z.number().min(0).optional().describe('Failed calls per second (errors and deadline exceeded, not rejections) at most this'),
    maxRestarts: nonNegInt('a non-negative integer').optional().describe('Agent restarts at most this'),
    maxPeakRatio: ratioSchema.optional().describe('Peak ≤ value × the other variant\'s peak'),
    minPeakRatio: ratioSchema
      .optional()
      .describe('Peak ≥ value × the other placement\'s peak, or OOM-killed (an OOM-killed peak equals its limit)'),
  })
  .describe('Thresholds for one variant; any failure makes `attestorm run` exit 1');

/** A kernel CPU list ("1", "0-1", "0,2-3"). */
const zCpuList = z.string().regex(/^\s*\d+(-\d+)?(\s*,\s*\d+(-\d+)?)*\s*$/, 'must be a CPU list like "1", "0-1" or "0,2-3"');

export const isolationSchema = z
  .strictObject({
    agentCpus: zCpuList.describe(
      'CPUs the agent runs on alone (cpuset cgroup of its own), e.g. "1". Reference agents only; the machine must have them, checked before anything starts',
    ),
    otherCpus: zCpuList
      .optional()
      .describe('CPUs of everything else the run starts (pods, workers, the kubelet emulator and the runner itself); default: every CPU of the machine not in agentCpus. Must not overlap agentCpus'),
  })
  .describe(
    'CPU isolation with cpuset cgroups (v1 cpuset hierarchy, or v2 with the cpuset controller): the agent alone on agentCpus, the runner and every pod on otherCpus. Recorded in results.json environment.isolation, with the reason when it could not be applied (no writable cpuset hierarchy); off unless set',
  );

const legacyTargetSchema = z
  .strictObject({
    socket: z.string().min(1),
    pid: posInt('a positive integer').optional(),
    cgroup: z.string().min(1).optional(),
    memoryLimit: zSizeAsWritten.optional(),
  })
  .describe('Shorthand for one variant named "external" with agent.kind external (socket, pid, cgroup, memoryLimit)');

const scenarioShape = {
    $schema: z.string().optional().describe('JSON Schema reference for editors; ignored'),
    name: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]*$/, 'must be lowercase letters, digits and "-"')
      .describe('Short name; used for the run folder'),
    description: z.string().default('').describe('What this scenario reproduces and what it needs'),
    duration: zDuration.default(30_000).describe('Load phase per variant run'),
    warmup: zDuration.default(2_000).describe('Time between the agent being ready and the load starting'),
    repetitions: posInt('a positive integer').default(1).describe('How often every variant is run; figures are medians with min–max across repetitions'),
    agent: agentInputSchema.default({}).describe('Agent settings shared by every variant (each variant takes the keys its kind understands and overrides them)'),
    variants: z.array(variantInputSchema).min(1).optional().describe('The agent configurations to compare, in order'),
    target: legacyTargetSchema.optional(),
    placements: z
      .array(z.enum(EXPECT_KEYS))
      .min(1)
      .optional()
      .describe('Shorthand for variants: reference agents named after their placements; default all three (or "external" with a target)'),
    load: loadSchema.default(loadSchema.parse({})),
    expect: z.record(variantNameSchema, expectSchema).default({}).describe('Expectations per variant name'),
    isolation: isolationSchema.optional(),
    faults: faultsSchema.default([]).describe('Chaos: faults applied during the load phase, `at` counted from the moment the calls start'),
    failOnInconclusive: z
      .boolean()
      .default(false)
      .describe('Fail the run (exit 1) when an expectation is inconclusive (only a bound was measured, e.g. the peak of an OOM-killed agent)'),
    oomKillsOutsideLoad: z
      .enum(['count', 'ignore'])
      .default('count')
      .describe('OOM kills while pods start, during warm-up, drain or stop: count them (labelled with their phase) or leave them out of oomKills'),
};

/** The variants as written, before per-kind checks: the explicit list, or the shorthand expanded. */
function variantInputs(s: { variants?: Array<{ name: string; agent: AgentInput }>; placements?: string[]; target?: z.output<typeof legacyTargetSchema> }): {
  list: Array<{ name: string; agent: AgentInput }>;
  path: string;
} {
  if (s.variants) return { list: s.variants, path: 'variants' };
  if (s.target) {
    const { memoryLimit, ...t } = s.target;
    return { list: [{ name: EXTERNAL_PLACEMENT, agent: { kind: 'external', ...t, ...(memoryLimit !== undefined ? { memoryLimit } : {}) } }], path: 'target' };
  }
  const placements = (s.placements ?? [...PLACEMENT_NAMES]).filter((p): p is (typeof PLACEMENT_NAMES)[number] => p !== EXTERNAL_PLACEMENT);
  return { list: placements.map((p) => ({ name: p, agent: { kind: 'reference' as const, placement: p } })), path: 'placements' };
}

/**
 * Per-variant problems found from the raw input alone, for when the scenario as a whole fails to
 * parse (zod then skips the transform that resolves variants): every problem is reported at once.
 */
export function variantProblems(raw: Record<string, unknown>): z.ZodError | null {
  // Values as written: the kind schemas check them (a wrong shared value is reported once, by path).
  const shared = (raw.agent && typeof raw.agent === 'object' && !Array.isArray(raw.agent) ? raw.agent : {}) as AgentInput;
  const checks: Array<{ name: string; agent: AgentInput; where: (string | number)[] }> = [];
  if (Array.isArray(raw.variants)) {
    raw.variants.forEach((v, i) => {
      const r = variantInputSchema.safeParse(v);
      const agent = r.success ? r.data.agent : ((v as { agent?: unknown })?.agent as AgentInput | undefined);
      if (agent && typeof agent === 'object') checks.push({ name: String(i), agent, where: ['variants', i, 'agent'] });
    });
  } else {
    const target = legacyTargetSchema.safeParse(raw.target);
    const placements = z.array(z.enum(EXPECT_KEYS)).safeParse(raw.placements);
    const { list, path } = variantInputs({
      ...(placements.success ? { placements: placements.data } : {}),
      ...(raw.target !== undefined && target.success ? { target: target.data } : {}),
    });
    for (const v of list) checks.push({ name: v.name, agent: v.agent, where: path === 'target' ? ['target'] : ['agent'] });
  }
  const check = z.any().superRefine((_, ctx) => {
    for (const c of checks) resolveVariantAgent(shared, c.agent, c.where, ctx);
  });
  const r = check.safeParse(null);
  return r.success ? null : r.error;
}

export const scenarioSchema = z
  .strictObject(scenarioShape)
  .superRefine((s, ctx) => {
    if (s.variants && (s.placements || s.target)) {
      ctx.addIssue({ code: 'custom', path: [s.placements ? 'placements' : 'target'], message: 'must not be given together with variants (it is a shorthand for them)' });
    }
    if (s.placements) {
      if (new Set(s.placements).size !== s.placements.length) {
        ctx.addIssue({ code: 'custom', path: ['placements'], message: `must not repeat a placement, got ${JSON.stringify(s.placements)}` });
      }
      if (s.target && s.placements.some((p) => p !== EXTERNAL_PLACEMENT)) {
        ctx.addIssue({ code: 'custom', path: ['placements'], message: `must be [external] with a target (an external agent's limiter cannot be moved), got ${JSON.stringify(s.placements)}` });
      }
      if (!s.target && s.placements.includes(EXTERNAL_PLACEMENT)) {
        ctx.addIssue({ code: 'custom', path: ['placements'], message: 'may contain "external" only together with a target, got "external"' });
      }
    }
    const names = variantInputs(s).list.map((v) => v.name);
    const seen = new Set<string>();
    for (const [i, n] of names.entries()) {
      if (seen.has(n)) ctx.addIssue({ code: 'custom', path: ['variants', i, 'name'], message: `must be unique, got "${n}" twice` });
      seen.add(n);
    }
    for (const [name, e] of Object.entries(s.expect)) {
      if (!e) continue;
      if (!names.includes(name)) {
        ctx.addIssue({ code: 'custom', path: ['expect', name], message: `names a variant this scenario does not run (runs ${names.join(', ')}), got "${name}"` });
      }
      for (const key of ['maxPeakRatio', 'minPeakRatio'] as const) {
        const r = e[key];
        if (r && !names.includes(r.to)) {
          ctx.addIssue({ code: 'custom', path: ['expect', name, key, 'to'], message: `must be a variant this scenario runs (${names.join(', ')}), got "${r.to}"` });
        }
        if (r && r.to === name) ctx.addIssue({ code: 'custom', path: ['expect', name, key, 'to'], message: `must name another variant, got "${r.to}"` });
      }
      for (const i of bystanderExpectIssues(e, s.load.bystanders !== undefined)) ctx.addIssue({ code: 'custom', path: ['expect', name, i.key], message: i.message });
    }
    if (s.isolation) {
      for (const [i, v] of variantInputs(s).list.entries()) {
        const kind = v.agent.kind ?? s.agent.kind ?? 'reference';
        if (kind !== 'reference') ctx.addIssue({ code: 'custom', path: ['isolation'], message: `pins reference agents only; variant ${i} ("${v.name}") is a ${kind} agent` });
      }
    }
    if (s.warmup >= 10 * 60_000) ctx.addIssue({ code: 'custom', path: ['warmup'], message: `must be under 10m, got ${s.warmup}ms` });
  })
  .transform((s, ctx) => {
    const { list, path } = variantInputs(s);
    const variants: Variant[] = [];
    for (const [i, v] of list.entries()) {
      const where = path === 'variants' ? ['variants', i, 'agent'] : path === 'target' ? ['target'] : ['agent'];
      const agent = resolveVariantAgent(s.agent, v.agent, where, ctx);
      if (agent) variants.push({ name: v.name, agent });
    }
    const { variants: _v, target: _t, placements: _p, ...rest } = s;
    return { ...rest, variants };
  })
  .describe('An attestorm scenario: one storm run against each variant (agent configuration) of a memory-limited agent');

export type ScenarioInput = z.input<typeof scenarioSchema>;
export type Scenario = z.output<typeof scenarioSchema>;
export type ExpectInput = z.output<typeof expectSchema>;

/** The variant names a scenario runs, in order. */
export function scenarioVariantNames(s: Scenario): string[] {
  return s.variants.map((v) => v.name);
}

/** The effective limiter placement and key of a variant's agent (external: unknown). */
export function variantPlacement(a: VariantAgent): { placement: PlacementName | null; key: string | null } {
  if (a.kind === 'reference') return { placement: a.placement, key: a.placement === 'disabled' ? null : a.key ?? a.keys[a.placement] };
  if (a.kind === 'spire') {
    const limited = Object.values(a.rateLimits ?? {}).some((n) => (n ?? 0) > 0);
    if (!limited) return { placement: 'disabled', key: null };
    return a.limiterPlacement === 'pre-attestation' ? { placement: 'pre-attestation', key: 'pod-uid' } : { placement: 'post-attestation', key: 'selector-set' };
  }
  return { placement: null, key: null };
}

/**
 * Keeps the named variants (in the scenario's order). Expectations about a variant not run, or
 * comparing with one, are dropped and named in `dropped`; an unknown name is an error.
 */
export function selectVariants(s: Scenario, names: string[]): { scenario: Scenario; dropped: string[] } {
  const known = scenarioVariantNames(s);
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length) throw new ConfigError(`--variants: ${unknown.map((n) => `"${n}"`).join(', ')} ${unknown.length > 1 ? 'are not variants' : 'is not a variant'} of ${s.name} (it has ${known.join(', ')})`);
  const keep = new Set(names);
  const dropped: string[] = [];
  const expect: Record<string, ExpectInput> = {};
  for (const [name, e] of Object.entries(s.expect)) {
    if (!e) continue;
    if (!keep.has(name)) {
      dropped.push(`${name}: every rule (variant not run)`);
      continue;
    }
    const kept: ExpectInput = { ...e };
    for (const key of ['maxPeakRatio', 'minPeakRatio'] as const) {
      const r = kept[key];
      if (r && !keep.has(r.to)) {
        dropped.push(`${name}.${key} (compares with ${r.to}, not run)`);
        delete kept[key];
      }
    }
    expect[name] = kept;
  }
  return { scenario: { ...s, variants: s.variants.filter((v) => keep.has(v.name)), expect }, dropped };
}

/**
 * The `attestorm run` flags that override scenario keys: the same definitions (rules and
 * descriptions) as the YAML keys, minus their defaults, so flags cannot drift from the file format.
 */
export const overrideKeys = {
  duration: { schema: scenarioShape.duration.unwrap().optional(), description: scenarioShape.duration.description ?? '' },
  repetitions: { schema: scenarioShape.repetitions.unwrap().optional(), description: scenarioShape.repetitions.description ?? '' },
  /** --agent-cpus sets isolation to { agentCpus } (replacing the file's isolation block). */
  isolation: { schema: isolationSchema.optional(), description: isolationSchema.shape.agentCpus.description ?? '' },
} as const;

export const overridesSchema = z.strictObject({
  duration: overrideKeys.duration.schema,
  repetitions: overrideKeys.repetitions.schema,
  isolation: overrideKeys.isolation.schema,
});
export type Overrides = z.output<typeof overridesSchema>;
