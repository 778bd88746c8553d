// The reference agent's settings in a scenario: its attestors, limiter (placement, key, limits,
// rejection status), modeled costs and extra config, and the keys it adds to the shared agent block.
import { z } from 'zod';
import { defaultKey, KEY_STRATEGIES, keyRuleProblem, keysAllowed, PLACEMENT_FACTS, PLACEMENTS, type LimitedPlacement } from '../../contract/index.js';
import { zDuration, zNonNegInt, zPosInt, zSizeAsWritten } from '../../util/index.js';
import { startedAgentShape, startedAgentSharedShape } from '../common-schema.js';

const k8sSchema = z
  .strictObject({
    pollInterval: zDuration.default(500).describe("Minimum time between kubelet fetches while a caller's pod is not listed yet"),
    maxPollAttempts: zPosInt('a positive integer').default(60).describe('Kubelet fetches before an attestation gives up on an unlisted pod'),
    shareFetches: z
      .boolean()
      .default(true)
      .describe(
        'One in-flight GET /pods shared by all waiting attestations (modern agents); false: each attestation attempt fetches and parses its own ~1 MiB copy (older agents, the first memory mechanism of the brief)',
      ),
  })
  .describe('k8s attestor settings of the reference agent');

const rateLimitsSchema = z
  .strictObject({
    fetch_x509_svid: zNonNegInt('a non-negative integer').default(0).describe('FetchX509SVID stream opens per second per key; 0 = unlimited'),
    fetch_jwt_svid: zNonNegInt('a non-negative integer').default(10).describe('FetchJWTSVID calls per second per key; 0 = unlimited'),
    fetch_x509_bundles: zNonNegInt('a non-negative integer').default(0).describe('FetchX509Bundles stream opens per second per key; 0 = unlimited'),
    fetch_jwt_bundles: zNonNegInt('a non-negative integer').default(0).describe('FetchJWTBundles stream opens per second per key; 0 = unlimited'),
  })
  .describe("Token-bucket limits per method (SPIRE's config keys): rate = burst = the integer given");

const placementKey = (p: LimitedPlacement) =>
  z
    .enum(keysAllowed(p), { error: (issue) => keyRuleProblem(p, issue.input) ?? undefined })
    .default(defaultKey(p))
    .describe(`Limiter key ${PLACEMENT_FACTS[p].where}`);

const keysSchema = z
  .strictObject({
    'pre-attestation': placementKey('pre-attestation'),
    'post-attestation': placementKey('post-attestation'),
  })
  .describe('Limiter key strategy per placement');

const modelSchema = z
  .strictObject({
    attestationWorkingSet: zSizeAsWritten
      .optional()
      .describe('Modeled cost, off unless set: bytes each in-flight attestation holds until it ends; reports name it'),
    podListWorkingSet: zSizeAsWritten
      .optional()
      .describe(
        "Modeled cost, off unless set: bytes each parsed kubelet pod list holds while the agent references it, standing in for a heavier parser (SPIRE's parse tree of a ~1 MiB /pods answer measured ~22 MB of Go heap; JSON.parse ~2 MiB); reports name it",
      ),
    cancelAbandoned: z
      .boolean()
      .optional()
      .describe(
        "An attestation ends when its caller goes away, as in SPIRE (the agent's default, true); false: older agents that keep attesting for callers who gave up. Reports name it when set",
      ),
  })
  .describe('Modeled costs and behaviours of the reference agent, named in reports when set');

/** The one program a reference agent's binDir must hold. */
export const REFERENCE_AGENT_PROGRAM = 'attestorm-agent';

const referenceOnlyShape = {
  attestors: z
    .array(z.enum(['unix', 'k8s']))
    .min(1)
    .default(['k8s'])
    .describe('Workload attestors of the reference agent, in order'),
  k8s: k8sSchema.default(k8sSchema.parse({})),
  rateLimits: rateLimitsSchema.default(rateLimitsSchema.parse({})),
  rejectStatus: z
    .enum(['unavailable', 'resource-exhausted'])
    .default('unavailable')
    .describe("Status of a rejected call: unavailable (SPIRE's merged design) or resource-exhausted (the proposal)"),
  keys: keysSchema.default(keysSchema.parse({})),
  model: modelSchema.default({}),
  extra: z
    .record(z.string(), z.unknown())
    .default({})
    .describe('Extra reference-agent config, deep-merged into the generated agent YAML (see `attestorm agent --help`)'),
};

/** The reference agent (src/agent): its limiter placement is the variant's choice. */
export const referenceAgentSchema = z
  .strictObject({
    kind: z.literal('reference'),
    placement: z
      .enum(PLACEMENTS, { error: `must be one of ${PLACEMENTS.join(', ')} for a reference agent` })
      .describe('Where the rate limiter sits: before attestation, after it, or nowhere'),
    key: z.enum(KEY_STRATEGIES).optional().describe('Limiter key strategy; default agent.keys[placement]'),
    binDir: z
      .string()
      .min(1)
      .optional()
      .describe(
        `A folder with an executable ${REFERENCE_AGENT_PROGRAM}, run instead of this project's agent (a reference agent built from another checkout, or a wrapper of it): started as \`${REFERENCE_AGENT_PROGRAM} <agent.yaml>\` with ATTESTORM_AGENT_BUNDLE naming this project's agent bundle and ATTESTORM_NODE its Node, it must print the agent's ready line. A variant's own key, never inherited from the shared block (where binDir is a SPIRE folder); this machine only`,
      ),
    ...startedAgentShape,
    ...referenceOnlyShape,
  })
  .superRefine((a, ctx) => {
    const problem = keyRuleProblem(a.placement, a.key, 'placement');
    if (problem) ctx.addIssue({ code: 'custom', path: ['key'], message: problem });
  });
export type ReferenceAgent = z.output<typeof referenceAgentSchema>;

/** A variant takes every started-agent and reference key of the shared block, never its placement or key. */
export const referenceInherits = [...Object.keys(startedAgentShape), ...Object.keys(referenceOnlyShape)];

/** The keys the reference agent adds to the shared agent block (the first kind: they set the block's order). */
export const referenceSharedShape = {
  placement: z.enum(PLACEMENTS).optional().describe('reference: where the rate limiter sits'),
  key: z.enum(KEY_STRATEGIES).optional().describe('reference: limiter key strategy; default agent.keys[placement]'),
  ...startedAgentSharedShape,
  attestors: z
    .array(z.enum(['unix', 'k8s']))
    .optional()
    .describe('reference: workload attestors, in order; default [k8s]'),
  k8s: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(k8sSchema.description ?? ''),
  rateLimits: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(
      "Token-bucket limits per method (SPIRE's config keys): rate = burst = the integer given; 0 = unlimited. reference default: fetch_jwt_svid 10; spire: never inherited",
    ),
  rejectStatus: z.enum(['unavailable', 'resource-exhausted']).optional().describe('reference: status of a rejected call'),
  keys: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(keysSchema.description ?? ''),
  model: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(modelSchema.description ?? ''),
  extra: z.record(z.string(), z.unknown()).optional().describe('reference: extra agent config, deep-merged into the generated agent YAML'),
};
