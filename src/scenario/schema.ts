// The scenario file's schema: one zod definition that validates YAML, fills defaults, generates
// scenarios/scenario.schema.json for editors, and supplies the `attestorm run` flag overrides.
import { z } from 'zod';
import { parseBytes, zBytes, zDuration } from '../util/index.js';

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
    failureRate: z.number().min(0).max(1).default(0).describe('Fraction of kubelet requests answered with HTTP 500'),
    visibilityDelay: zDuration
      .default(0)
      .describe('How long a new pod stays missing from the kubelet\'s /pods list; attestations of its callers poll meanwhile'),
    fillerPods: nonNegInt('a non-negative integer')
      .optional()
      .describe('Other pods on the emulated node, padding the /pods document (about 1 MiB at 110 pods); default: up to the kubelet\'s 110'),
    tls: z.boolean().default(false).describe('Serve the kubelet API over HTTPS with a per-run self-signed CA'),
    token: z.string().min(1).optional().describe('Bearer token the kubelet requires (written to a token file the agent reads)'),
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
    cancelAbandoned: z
      .boolean()
      .optional()
      .describe('Modeled behaviour: cancel an attestation when its caller disconnects (default false, like real agents); reports name it'),
  })
  .describe('Modeled costs of the reference agent, off unless set');

const restartSchema = z
  .strictObject({
    initialBackoff: zDuration.default(10_000).describe('Delay before the first restart after the agent dies (kubelet: 10s)'),
    maxBackoff: zDuration.default(300_000).describe('Cap of the doubling restart delay (kubelet: 5m)'),
    resetAfter: zDuration
      .default(600_000)
      .describe('An agent that ran this long without dying resets the back-off (kubelet: 10m)'),
  })
  .describe('Restarting the agent after it dies, as a kubelet would');

const agentSchema = z
  .strictObject({
    memoryLimit: zBytes.default(128 * 2 ** 20).describe('Memory limit of the agent\'s cgroup (like the pod\'s resources.limits.memory)'),
    cpu: cpuSchema.default(cpuSchema.parse({})),
    attestors: z.array(z.enum(['unix', 'k8s'])).min(1).default(['k8s']).describe('Workload attestors of the reference agent, in order'),
    kubelet: kubeletSchema.default(kubeletSchema.parse({})),
    k8s: k8sSchema.default(k8sSchema.parse({})),
    rateLimits: rateLimitsSchema.default(rateLimitsSchema.parse({})),
    rejectStatus: z
      .enum(['unavailable', 'resource-exhausted'])
      .default('unavailable')
      .describe('Status of a rejected call: unavailable (SPIRE\'s merged design) or resource-exhausted (the proposal)'),
    keys: keysSchema.default(keysSchema.parse({})),
    model: modelSchema.default({}),
    restart: restartSchema.default(restartSchema.parse({})),
    startTimeout: zDuration.default(30_000).describe('How long the agent may take to print its ready line'),
    extra: z
      .record(z.string(), z.unknown())
      .default({})
      .describe('Extra reference-agent config, deep-merged into the generated agent YAML (see `attestorm agent --help`)'),
  })
  .describe('The reference agent under test');

const targetSchema = z
  .strictObject({
    socket: z.string().min(1).describe('Workload API socket of an already running agent'),
    pid: posInt('a positive integer').optional().describe('PID of that agent, to sample VmRSS/VmHWM'),
    cgroup: z.string().min(1).optional().describe('Absolute memory cgroup directory of that agent, to sample usage and peak'),
    memoryLimit: zBytes.optional().describe('Limit to report for it when the cgroup has none'),
  })
  .superRefine((t, ctx) => {
    if (t.pid === undefined && t.cgroup === undefined) {
      ctx.addIssue({ code: 'custom', message: 'must name the agent\'s pid or cgroup so its memory can be sampled, got neither', path: [] });
    }
  })
  .describe('An external agent to storm instead of the reference agent (one "external" column; no restarts)');

const methodNames = ['FetchJWTSVID', 'FetchX509SVID', 'FetchX509Bundles', 'FetchJWTBundles', 'ValidateJWTSVID'] as const;

const loadSchema = z
  .strictObject({
    pods: posInt('a positive integer').default(4).describe('Short-lived pods started on the emulated node'),
    workersPerPod: posInt('a positive integer').default(25).describe('Forked worker processes per pod, each a separate caller'),
    connection: z
      .enum(['per-call', 'per-worker', 'per-retry'])
      .default('per-call')
      .describe('per-call: a fresh connection for every call (the storm); per-worker: one reused connection; per-retry: a fresh one after each failure'),
    client: z
      .enum(['h2', 'grpc-js'])
      .default('h2')
      .describe("Workers' gRPC client: h2 = gRPC written on node:http2 (leaner, more calls per CPU-second), grpc-js = a real @grpc/grpc-js client as applications use it"),
    rate: z
      .number()
      .positive('must be a positive number')
      .optional()
      .describe('Calls per second per worker (open loop); absent = closed loop (a tight loop)'),
    deadline: zDuration.default(5000).describe('Client deadline of each call; an abandoned call is retried'),
    retry: z.enum(['immediate', 'backoff']).default('immediate').describe('After a failed call: retry at once, or back off exponentially with jitter'),
    methods: z
      .partialRecord(z.enum(methodNames), z.number().int('must be a positive integer weight').positive('must be a positive integer weight'))
      .default({ FetchJWTSVID: 1 })
      .describe('Method mix: weights per Workload API method'),
    audience: z.string().min(1).default('storm').describe('Audience of JWT-SVID requests'),
    podLifetime: zDuration.optional().describe('Each pod is replaced by a new one (new UID, not yet visible to the kubelet) after this long'),
    uidMode: z.enum(['same', 'per-pod']).default('same').describe('OS uid of pods: all the same, or one per pod (needs root)'),
    cgroupDriver: z.enum(['cgroupfs', 'systemd']).default('cgroupfs').describe('Kubelet cgroup naming of the pods\' cgroups'),
  })
  .describe('The storm: identical for every placement');

const ratioSchema = z.strictObject({
  to: z.enum(EXPECT_KEYS).describe('The placement to compare with'),
  value: z.number().positive('must be a positive number').describe('The ratio of peak memories'),
});

const expectSchema = z
  .strictObject({
    oomKilled: z.boolean().optional().describe('Whether the agent must (true) or must not (false) be OOM-killed'),
    maxPeakMemory: zSizeAsWritten.optional().describe('Peak memory at most this'),
    minPeakMemory: zSizeAsWritten.optional().describe('Peak memory at least this'),
    minOkRps: z.number().min(0).optional().describe('Successful calls per second at least this'),
    maxErrorRps: z.number().min(0).optional().describe('Failed calls per second (errors and deadline exceeded, not rejections) at most this'),
    maxRestarts: nonNegInt('a non-negative integer').optional().describe('Agent restarts at most this'),
    maxPeakRatio: ratioSchema.optional().describe('Peak ≤ value × the other placement\'s peak'),
    minPeakRatio: ratioSchema
      .optional()
      .describe('Peak ≥ value × the other placement\'s peak, or OOM-killed (an OOM-killed peak equals its limit)'),
  })
  .describe('Thresholds for one placement; any failure makes `attestorm run` exit 1');

const scenarioShape = {
    $schema: z.string().optional().describe('JSON Schema reference for editors; ignored'),
    name: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]*$/, 'must be lowercase letters, digits and "-"')
      .describe('Short name; used for the run folder'),
    description: z.string().default('').describe('What this scenario reproduces and what it needs'),
    duration: zDuration.default(30_000).describe('Load phase per placement run'),
    warmup: zDuration.default(2_000).describe('Time between the agent being ready and the load starting'),
    repetitions: posInt('a positive integer').default(1).describe('How often the whole placement matrix is repeated'),
    agent: agentSchema.default(agentSchema.parse({})),
    target: targetSchema.optional(),
    placements: z
      .array(z.enum(EXPECT_KEYS))
      .min(1)
      .optional()
      .describe('Limiter placements to compare, in order; default all three (or "external" with a target)'),
    load: loadSchema.default(loadSchema.parse({})),
    expect: z.partialRecord(z.enum(EXPECT_KEYS), expectSchema).default({}).describe('Expectations per placement'),
};

export const scenarioSchema = z
  .strictObject(scenarioShape)
  .superRefine((s, ctx) => {
    const placements = s.placements ?? (s.target ? [EXTERNAL_PLACEMENT] : [...PLACEMENT_NAMES]);
    if (new Set(placements).size !== placements.length) {
      ctx.addIssue({ code: 'custom', path: ['placements'], message: `must not repeat a placement, got ${JSON.stringify(placements)}` });
    }
    if (s.target && placements.some((p) => p !== EXTERNAL_PLACEMENT)) {
      ctx.addIssue({
        code: 'custom',
        path: ['placements'],
        message: `must be [external] with a target (an external agent's limiter cannot be moved), got ${JSON.stringify(placements)}`,
      });
    }
    if (!s.target && placements.includes(EXTERNAL_PLACEMENT)) {
      ctx.addIssue({ code: 'custom', path: ['placements'], message: 'may contain "external" only together with a target, got "external"' });
    }
    for (const [name, e] of Object.entries(s.expect)) {
      if (!e) continue;
      if (!placements.includes(name as never)) {
        ctx.addIssue({ code: 'custom', path: ['expect', name], message: `names a placement this scenario does not run (runs ${placements.join(', ')}), got "${name}"` });
      }
      for (const key of ['maxPeakRatio', 'minPeakRatio'] as const) {
        const r = e[key];
        if (r && !placements.includes(r.to)) {
          ctx.addIssue({ code: 'custom', path: ['expect', name, key, 'to'], message: `must be a placement this scenario runs (${placements.join(', ')}), got "${r.to}"` });
        }
        if (r && r.to === name) ctx.addIssue({ code: 'custom', path: ['expect', name, key, 'to'], message: `must name another placement, got "${r.to}"` });
      }
    }
    if (s.warmup >= 10 * 60_000) ctx.addIssue({ code: 'custom', path: ['warmup'], message: `must be under 10m, got ${s.warmup}ms` });
  })
  .describe('An attestorm scenario: one storm run against each rate-limiter placement of a memory-limited agent');

export type ScenarioInput = z.input<typeof scenarioSchema>;
export type Scenario = z.output<typeof scenarioSchema>;
export type ExpectInput = z.output<typeof expectSchema>;
export type ScenarioPlacement = (typeof EXPECT_KEYS)[number];

/** The placements a scenario runs, defaults applied. */
export function scenarioPlacements(s: Scenario): ScenarioPlacement[] {
  return s.placements ?? (s.target ? [EXTERNAL_PLACEMENT] : [...PLACEMENT_NAMES]);
}

/**
 * The `attestorm run` flags that override scenario keys: the same definitions (rules and
 * descriptions) as the YAML keys, minus their defaults, so flags cannot drift from the file format.
 */
export const overrideKeys = {
  duration: { schema: scenarioShape.duration.unwrap().optional(), description: scenarioShape.duration.description ?? '' },
  repetitions: { schema: scenarioShape.repetitions.unwrap().optional(), description: scenarioShape.repetitions.description ?? '' },
  placements: { schema: scenarioShape.placements, description: scenarioShape.placements.description ?? '' },
} as const;

export const overridesSchema = z.strictObject({
  duration: overrideKeys.duration.schema,
  repetitions: overrideKeys.repetitions.schema,
  placements: overrideKeys.placements.schema,
});
export type Overrides = z.output<typeof overridesSchema>;
