// What a `spire` variant may set, as one zod schema: the scenario's `agent: { kind: spire, ... }`
// block is validated with it before any process starts.
import { z } from 'zod';
import { parseOrThrow, zDuration } from '../util/index.js';
import type { HclTree } from './hcl.js';

/** SPIRE's Workload API/SDS rate-limit keys (agent.experimental.ratelimit), calls per second per selector set. */
export const SPIRE_RATE_LIMIT_KEYS = ['fetch_x509_svid', 'fetch_jwt_svid', 'fetch_x509_bundles', 'fetch_jwt_bundles', 'stream_secrets', 'fetch_secrets'] as const;
export type SpireRateLimitKey = (typeof SPIRE_RATE_LIMIT_KEYS)[number];

/** The gRPC method each key limits, as SPIRE names it in its "rate limiting enabled" log line. */
export const SPIRE_RATE_LIMIT_METHODS: Record<SpireRateLimitKey, string> = {
  fetch_x509_svid: '/SpiffeWorkloadAPI/FetchX509SVID',
  fetch_jwt_svid: '/SpiffeWorkloadAPI/FetchJWTSVID',
  fetch_x509_bundles: '/SpiffeWorkloadAPI/FetchX509Bundles',
  fetch_jwt_bundles: '/SpiffeWorkloadAPI/FetchJWTBundles',
  stream_secrets: '/envoy.service.secret.v3.SecretDiscoveryService/StreamSecrets',
  fetch_secrets: '/envoy.service.secret.v3.SecretDiscoveryService/FetchSecrets',
};

const zRate = z.number().int().min(1, 'must be a positive integer (calls per second; leave the key out to disable)').max(1_000_000);
export const spireRateLimitsSchema = z.strictObject(Object.fromEntries(SPIRE_RATE_LIMIT_KEYS.map((k) => [k, zRate.optional()])) as Record<SpireRateLimitKey, z.ZodOptional<typeof zRate>>);
export type SpireRateLimits = Partial<Record<SpireRateLimitKey, number>>;

// HCL trees are checked when rendered (keys, value types); here only "an object".
const zHclTree = z.record(z.string(), z.unknown()).transform((v) => v as HclTree);

const TRUST_DOMAIN = /^[a-z0-9._-]+$/;

export const spireOptionsSchema = z.strictObject({
  /** Folder with spire-server and spire-agent; else $SPIRE_BIN_DIR, else PATH. */
  binDir: z.string().min(1).optional(),
  trustDomain: z.string().regex(TRUST_DOMAIN, 'must be a SPIFFE trust domain (lowercase letters, digits, ".", "-", "_")').default('attestorm.test'),
  /** SPIRE's own limiter; left out = off. */
  rateLimits: spireRateLimitsSchema.optional(),
  /** Merged over the generated agent/server HCL (objects key by key; null removes a key). */
  extraAgentConfig: zHclTree.optional(),
  extraServerConfig: zHclTree.optional(),
  /** The k8s workload attestor's polling while a pod is not listed yet (SPIRE's defaults: 500ms, 60). */
  k8s: z
    .strictObject({
      pollRetryInterval: zDuration.optional(),
      maxPollAttempts: z.number().int().min(1).max(10_000).optional(),
    })
    .default({}),
  /** How long a pod may wait for its first JWT-SVID after the agent is ready (entries take ~10 s). */
  svidTimeout: zDuration.default(60_000),
  /** How long the server and the agent may take to report ready. */
  startTimeout: zDuration.default(30_000),
  logLevel: z.enum(['DEBUG', 'INFO', 'WARN', 'ERROR']).default('INFO'),
});

export type SpireOptions = z.input<typeof spireOptionsSchema>;
export type ResolvedSpireOptions = z.output<typeof spireOptionsSchema>;

/** Validates a spire variant's settings; ConfigError naming each bad path (under `at`). */
export function parseSpireOptions(input: unknown, at = 'agent'): ResolvedSpireOptions {
  return parseOrThrow(spireOptionsSchema, input ?? {}, at);
}

/** True when at least one limit is set: the variant is then "post-attestation" keyed by selector set. */
export function limiterEnabled(limits: SpireRateLimits | undefined): boolean {
  return !!limits && Object.values(limits).some((v) => typeof v === 'number' && v > 0);
}
