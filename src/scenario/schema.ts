// The scenario file's schema: one zod definition that validates YAML, fills defaults, generates
// scenarios/scenario.schema.json for editors, and supplies the `attestorm run` flag overrides.
import { z } from 'zod';
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
import {
  agentKindSummary,
  AGENT_KINDS,
  DEFAULT_AGENT_KIND,
  resolveVariantAgent,
  sharedAgentShape,
  TARGET_KINDS,
  targetKind,
  type VariantAgent,
} from '../targets/index.js';
import { zDuration, zNonNegInt, zPosInt, zSizeAsWritten } from '../util/index.js';
import { DEFAULT_MEMORY_MEASURE, MEMORY_MEASURES, PLACEMENTS, TOPOLOGIES, type PlacementName } from '../contract/index.js';

const pinnableKinds = () =>
  TARGET_KINDS.filter((k) => k.pinnable)
    .map((k) => k.kind)
    .join(', ');

/** The single column used when the target is an external agent: placements then mean nothing. */
export const EXTERNAL_PLACEMENT = 'external' as const;
export const EXPECT_KEYS = [...PLACEMENTS, EXTERNAL_PLACEMENT] as const;

/**
 * Shared agent settings (and the agent of the `placements` shorthand): keys of every kind are
 * accepted here, as written; each variant takes the keys its kind understands and overrides them.
 */
const agentInputSchema = z
  .strictObject({
    kind: z.enum(AGENT_KINDS).optional().describe(agentKindSummary()),
    ...sharedAgentShape(),
  })
  .describe('Agent settings, checked per variant against the rules of its kind');

const variantNameSchema = z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'must be lowercase letters, digits and "-"');
const variantInputSchema = z
  .strictObject({
    name: variantNameSchema.describe('Name of this variant: a column of the comparison, a key of `expect`'),
    agent: agentInputSchema.default({}).describe("Settings merged over the scenario's shared `agent` block"),
  })
  .describe('One agent configuration to storm');

type AgentInput = z.output<typeof agentInputSchema>;

export interface Variant {
  name: string;
  agent: VariantAgent;
}

const methodNames = LOAD_METHODS as unknown as readonly [LoadMethod, ...LoadMethod[]];

// Defaults and descriptions come from the load generator's table, as do `attestorm load`'s flags.
const loadSchema = z
  .strictObject({
    pods: zPosInt('a positive integer').default(LOAD_DEFAULTS.pods).describe(LOAD_DESCRIPTIONS.pods),
    workersPerPod: zPosInt('a positive integer').default(LOAD_DEFAULTS.workersPerPod).describe(LOAD_DESCRIPTIONS.workersPerPod),
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
    maxPeakMemory: zSizeAsWritten.optional().describe("Peak memory at most this, in the scenario's memoryMeasure (working set unless set)"),
    minPeakMemory: zSizeAsWritten.optional().describe("Peak memory at least this, in the scenario's memoryMeasure (working set unless set)"),
    minOfferedRps: z
      .number()
      .positive('must be a positive number of calls per second')
      .optional()
      .describe(
        "The storm intensity this variant's shape needs: calls the workers started per second at least this. A precondition, not a threshold: below it the generator, the machine or a neighbour held the storm back, and the variant is inconclusive with the measured numbers (never failed, never passed)",
      ),
    minInflightAttestations: zPosInt('a positive integer')
      .optional()
      .describe(
        "The pile-up this variant's collapsing shape needs: attestations in flight at once (the agent's metrics, read once a second) at least this, or an OOM kill. A precondition like minOfferedRps, for shapes where the agent falls behind: a closed-loop storm offers fewer calls the further the agent collapses, so the offered rate cannot tell a weak storm from a strong collapse",
      ),
    minOpenConnections: zPosInt('a positive integer')
      .optional()
      .describe(
        "The storm this variant's shape needs to reach its agent: Workload API connections the agent held open at once (its own gauge, read once a second) at least this. A precondition like minOfferedRps, for storms whose workers wait for their answers: their offered rate is set by how fast the agent answers, so only the connections it holds tell a full-size storm from a weak one",
      ),
    minAgentCpuCores: z
      .number()
      .positive('must be a positive number of cores')
      .optional()
      .describe(
        "The CPU this variant's shape needs its agent to get, in cores on average over the load phase. A precondition like minOfferedRps: when the machine was saturated (every core busy) and the agent got less, neighbours took its CPU and the variant is inconclusive with the numbers; on a machine with CPU to spare a starved agent is its own doing and its rules are judged",
      ),
    maxRejectionLatency: zDuration
      .optional()
      .describe(
        "How long the agent may take to answer the storm calls its limiter rejects (their median), at most this, e.g. 400ms. A precondition for judging what the agent admitted: a rejection waits on nothing but the agent's own backlog, so an admitted call queues as long before its attestation starts. Above it — or with no rejection to time — the machine's CPU, not the limiter, decided whether admitted calls met their deadline: minAdmittedSuccess, minOkRps, maxErrorRps and peak ratios to or from this variant are not judged (inconclusive with the numbers); survival, absolute peaks, restarts and bystanders still are",
      ),
    minOkRps: z
      .number()
      .min(0)
      .optional()
      .describe('Successful calls per second at least this (an absolute rate: it depends on the machine; prefer minAdmittedSuccess)'),
    minAdmittedSuccess: z
      .number({ error: 'must be a ratio between 0 and 1' })
      .min(0, 'must be a ratio between 0 and 1')
      .max(1, 'must be a ratio between 0 and 1')
      .optional()
      .describe(
        "Of the storm calls the agent admitted (every call but rate-limit rejections), the share that succeeded, at least this (0..1): the agent keeps serving what its limiter lets through, whatever the machine's speed",
      ),
    maxErrorRps: z.number().min(0).optional().describe('Failed calls per second (errors and deadline exceeded, not rejections) at most this'),
    maxRestarts: zNonNegInt('a non-negative integer').optional().describe('Agent restarts at most this'),
    maxTimeNearLimit: z
      .number()
      .min(0)
      .max(1, 'must be a ratio between 0 and 1')
      .optional()
      .describe(
        "Of the storm's seconds, the share the agent's working set stood at >= 95% of its limit, at most this (0..1), in its worst repetition: survive and stay clear of the limit",
      ),
    maxMemoryStall: z
      .number()
      .min(0)
      .max(1, 'must be a ratio between 0 and 1')
      .optional()
      .describe(
        "Of the storm's time, the share some of the agent's tasks stalled on memory (cgroup v2 PSI some), at most this (0..1), in its worst repetition; not judged on cgroup v1",
      ),
    maxPeakRatio: ratioSchema.optional().describe("Peak ≤ value × the other variant's peak"),
    minPeakRatio: ratioSchema.optional().describe("Peak ≥ value × the other placement's peak, or OOM-killed (an OOM-killed peak equals its limit)"),
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
      .describe(
        'CPUs of everything else the run starts (pods, workers, the kubelet emulator and the runner itself); default: every CPU of the machine not in agentCpus. Must not overlap agentCpus',
      ),
  })
  .describe(
    'CPU isolation with cpuset cgroups (v1 cpuset hierarchy, or v2 with the cpuset controller): the agent alone on agentCpus, the runner and every pod on otherCpus. Recorded in results.json environment.isolation, with the reason when it could not be applied (no writable cpuset hierarchy); off unless set',
  );

export const clusterSchema = z
  .strictObject({
    topology: z
      .enum(TOPOLOGIES)
      .default('single-node')
      .describe(
        "Where a cluster run puts its pods. single-node: the agent under test, the storm's and the bystanders' pods on one node. three-node (a control plane and two workers): the agent under test and the storm's pods on one worker; a second agent of the same variant, which no storm calls, and the bystander pods (load.bystanders, required) on the other; spire-server on the control plane (SPIRE variants). The report then shows the storm's node, the quiet node and the server side by side. Runs only in a cluster (--cluster/--context) of at least 3 nodes, checked before anything starts",
      ),
  })
  .describe('How a cluster run (--cluster/--context) spreads its pods over the nodes; a local run takes single-node only');

const legacyTargetSchema = z
  .strictObject({
    socket: z.string().min(1),
    pid: zPosInt('a positive integer').optional(),
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
  repetitions: zPosInt('a positive integer').default(1).describe('How often every variant is run; figures are medians with min–max across repetitions'),
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
  cluster: clusterSchema.default({ topology: 'single-node' }),
  faults: faultsSchema.default([]).describe('Chaos: faults applied during the load phase, `at` counted from the moment the calls start'),
  failOnInconclusive: z
    .boolean()
    .default(false)
    .describe('Fail the run (exit 1) when an expectation is inconclusive (only a bound was measured, e.g. the peak of an OOM-killed agent)'),
  requireExpectations: z
    .boolean()
    .default(false)
    .describe(
      'Exit non-zero (4) when the run judged no expectation (none written, or every one dropped: variants not run, storms too weak): for CI gates, where a run that checked nothing must not pass silently',
    ),
  memoryMeasure: z
    .enum(MEMORY_MEASURES)
    .default(DEFAULT_MEMORY_MEASURE)
    .describe(
      "The agent's memory figure that peaks, peak ratios, maxPeakMemory/minPeakMemory, sweeps and baselines use: working-set (cgroup usage minus inactive file pages, what kubectl top and the kubelet's eviction count), usage (the cgroup's whole charge, page cache included; the kernel's high-water mark) or rss (anonymous memory). Every run records all three; survival is always the kernel's OOM kill",
    ),
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
  const placements = (s.placements ?? [...PLACEMENTS]).filter((p): p is PlacementName => p !== EXTERNAL_PLACEMENT);
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
      ctx.addIssue({
        code: 'custom',
        path: [s.placements ? 'placements' : 'target'],
        message: 'must not be given together with variants (it is a shorthand for them)',
      });
    }
    if (s.placements) {
      if (new Set(s.placements).size !== s.placements.length) {
        ctx.addIssue({ code: 'custom', path: ['placements'], message: `must not repeat a placement, got ${JSON.stringify(s.placements)}` });
      }
      if (s.target && s.placements.some((p) => p !== EXTERNAL_PLACEMENT)) {
        ctx.addIssue({
          code: 'custom',
          path: ['placements'],
          message: `must be [external] with a target (an external agent's limiter cannot be moved), got ${JSON.stringify(s.placements)}`,
        });
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
        ctx.addIssue({
          code: 'custom',
          path: ['expect', name],
          message: `names a variant this scenario does not run (runs ${names.join(', ')}), got "${name}"`,
        });
      }
      for (const key of ['maxPeakRatio', 'minPeakRatio'] as const) {
        const r = e[key];
        if (r && !names.includes(r.to)) {
          ctx.addIssue({
            code: 'custom',
            path: ['expect', name, key, 'to'],
            message: `must be a variant this scenario runs (${names.join(', ')}), got "${r.to}"`,
          });
        }
        if (r && r.to === name) ctx.addIssue({ code: 'custom', path: ['expect', name, key, 'to'], message: `must name another variant, got "${r.to}"` });
      }
      for (const i of bystanderExpectIssues(e, s.load.bystanders !== undefined))
        ctx.addIssue({ code: 'custom', path: ['expect', name, i.key], message: i.message });
    }
    if (s.isolation) {
      for (const [i, v] of variantInputs(s).list.entries()) {
        const kind = v.agent.kind ?? s.agent.kind ?? DEFAULT_AGENT_KIND;
        if (!targetKind(kind).pinnable)
          ctx.addIssue({ code: 'custom', path: ['isolation'], message: `pins ${pinnableKinds()} agents only; variant ${i} ("${v.name}") is a ${kind} agent` });
      }
    }
    if (s.cluster.topology === 'three-node' && !s.load.bystanders)
      ctx.addIssue({
        code: 'custom',
        path: ['load', 'bystanders'],
        message: "must be set with cluster.topology three-node: the bystanders are the quiet node's pods, whose service is what the topology measures",
      });
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

/**
 * Keeps the named variants (in the scenario's order). Expectations about a variant not run, or
 * comparing with one, are dropped and named in `dropped`; an unknown name is an error.
 */
export function selectVariants(s: Scenario, names: string[]): { scenario: Scenario; dropped: string[] } {
  const known = scenarioVariantNames(s);
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length)
    throw new ConfigError(
      `--variants: ${unknown.map((n) => `"${n}"`).join(', ')} ${unknown.length > 1 ? 'are not variants' : 'is not a variant'} of ${s.name} (it has ${known.join(', ')})`,
    );
  const keep = new Set(names);
  const dropped: string[] = [];
  const expect: Record<string, ExpectInput> = {};
  for (const [name, e] of Object.entries(s.expect)) {
    if (!e) continue;
    if (!keep.has(name)) {
      for (const [key, want] of Object.entries(e)) if (want !== undefined) dropped.push(`${name}.${key} (variant not run)`);
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
