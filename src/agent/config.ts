// The agent's configuration: one zod schema for the YAML file and the CLI flags. Every key is
// documented here (docs/cli.md, the command reference, is generated from these descriptions).
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { DEFAULT_KEYS_IN_WORDS, KEY_STRATEGIES, keyInEffect, keyRuleProblem, PLACEMENTS, type KeyStrategyName } from '../contract/index.js';
import { ConfigError } from '../errors.js';
import { parseOrThrow, zBytes, zDuration } from '../util/index.js';

export const ATTESTORS = ['unix', 'k8s'] as const;
export const LIMIT_KEYS = ['fetch_x509_svid', 'fetch_jwt_svid', 'fetch_x509_bundles', 'fetch_jwt_bundles', 'validate_jwt_svid'] as const;

const nonNegInt = z.number().int().min(0);

export const limitsSchema = z
  .strictObject({
    fetch_x509_svid: nonNegInt.default(0).describe('FetchX509SVID stream opens per second per key; 0 = unlimited'),
    fetch_jwt_svid: nonNegInt.default(0).describe('FetchJWTSVID calls per second per key; 0 = unlimited'),
    fetch_x509_bundles: nonNegInt.default(0).describe('FetchX509Bundles stream opens per second per key; 0 = unlimited'),
    fetch_jwt_bundles: nonNegInt.default(0).describe('FetchJWTBundles stream opens per second per key; 0 = unlimited'),
    validate_jwt_svid: nonNegInt.default(0).describe('ValidateJWTSVID calls per second per key; 0 = exempt (as in SPIRE)'),
  })
  .describe('Token bucket per key and method: rate = burst = the integer given');

export const rateLimitSchema = z
  .strictObject({
    placement: z.enum(PLACEMENTS).default('disabled').describe('Where the limiter sits: before attestation, after it, or nowhere'),
    key: z.enum(KEY_STRATEGIES).optional().describe(`Limiter key strategy; ${DEFAULT_KEYS_IN_WORDS}`),
    limits: limitsSchema.default(limitsSchema.parse({})),
    rejectStatus: z
      .enum(['unavailable', 'resource-exhausted'])
      .default('unavailable')
      .describe('Status of a rejected call: unavailable (as SPIRE merged) or resource-exhausted (as first proposed)'),
    gcInterval: zDuration.default(60_000).describe('A key unused for two of these intervals is dropped'),
    kubernetesNode: z
      .enum(['auto', 'true', 'false'])
      .default('auto')
      .describe('Whether pod-uid keys read /proc/<pid>/cgroup; auto = when a kubepods cgroup or the k8s attestor is present'),
    cgroupCacheTtl: zDuration.default(1000).describe("How long the pod-uid key strategy caches a PID's cgroup read"),
  })
  .describe('Workload API rate limiting');

export const unixSchema = z
  .strictObject({
    workloadPath: z.boolean().default(false).describe('Add unix:path of /proc/<pid>/exe'),
    workloadSha256: z.boolean().default(false).describe('Add unix:sha256 of the executable (reads it whole on every call)'),
    maxExeBytes: zBytes.default(64 * 2 ** 20).describe('Largest executable hashed; bigger ones fail attestation'),
  })
  .describe('unix attestor');

export const k8sSchema = z
  .strictObject({
    kubeletUrl: z.url().default('https://127.0.0.1:10250').describe('Base URL of the kubelet read API (GET <url>/pods)'),
    tokenFile: z.string().optional().describe('Bearer token file (the service-account token on a real node)'),
    caFile: z.string().optional().describe("CA bundle for the kubelet's serving certificate"),
    skipVerify: z.boolean().default(false).describe('Skip TLS verification of the kubelet (test clusters only)'),
    timeout: zDuration.default(5000).describe('Timeout of one kubelet request'),
    pollInterval: zDuration.default(500).describe('Minimum time between kubelet fetches while a pod is not listed yet'),
    maxPollAttempts: z.number().int().positive().default(60).describe('Kubelet fetches before giving up on an unlisted pod'),
    shareFetches: z
      .boolean()
      .default(true)
      .describe(
        'Share one in-flight GET /pods among all waiting attestations (modern agents); false: each attestation attempt fetches and parses its own (older agents)',
      ),
    nodeName: z.string().optional().describe("Value of the k8s:node-name selector; default: the pod's spec.nodeName"),
  })
  .describe('k8s attestor');

export const svidSchema = z
  .strictObject({
    jwtTtl: zDuration.default(5 * 60_000).describe('JWT-SVID lifetime'),
    x509Ttl: zDuration.default(60 * 60_000).describe('X.509-SVID lifetime'),
    rotationInterval: zDuration.default(0).describe('Rotate SVIDs (and push stream updates) this often; 0 = at half of the X.509 TTL'),
  })
  .describe('SVID issuing');

export const modelSchema = z
  .strictObject({
    attestationWorkingSet: zBytes
      .default(0)
      .describe('Modeled cost, off by default: bytes each in-flight attestation holds (allocated and touched) until it ends'),
    podListWorkingSet: zBytes
      .default(0)
      .describe(
        "Modeled cost, off by default: bytes each parsed kubelet pod list holds (allocated and touched) while referenced, standing in for a heavier parser (SPIRE's parse tree of a ~1 MiB /pods answer: ~22 MB)",
      ),
    cancelAbandoned: z
      .boolean()
      .default(true)
      .describe(
        'An attestation ends when its caller goes away, as in SPIRE (default true); false: older agents that keep attesting for callers who gave up (a memory mechanism seen in the field), named in reports',
      ),
  })
  .describe('Modeled costs and behaviours, each named in reports when turned on');

export const agentConfigSchema = z
  .strictObject({
    socket: z.string().min(1).default('/tmp/attestorm/agent.sock').describe('Unix socket path of the Workload API'),
    trustDomain: z
      .string()
      .regex(/^[a-z0-9._-]+$/, 'must be a trust domain name (lowercase letters, digits, ".", "_", "-")')
      .default('example.org')
      .describe('Trust domain of issued SVIDs'),
    attestors: z.array(z.enum(ATTESTORS)).min(1).default(['unix']).describe('Workload attestors to run, in order'),
    procRoot: z.string().default('/proc').describe('procfs to read callers from (like HOST_PROC)'),
    unix: unixSchema.default(unixSchema.parse({})),
    k8s: k8sSchema.default(k8sSchema.parse({})),
    rateLimit: rateLimitSchema.default(rateLimitSchema.parse({})),
    entries: z.string().optional().describe('Registration entries YAML; without it every caller gets an ID derived from its selectors'),
    svid: svidSchema.default(svidSchema.parse({})),
    metrics: z
      .string()
      .regex(/^[^:\s]*:\d+$/, 'must be host:port, e.g. 127.0.0.1:9988')
      .optional()
      .describe('Serve Prometheus metrics on host:port at /metrics; off when absent'),
    model: modelSchema.default(modelSchema.parse({})),
  })
  .superRefine((cfg, ctx) => {
    const problem = keyRuleProblem(cfg.rateLimit.placement, cfg.rateLimit.key, 'rateLimit.placement');
    if (problem) ctx.addIssue({ code: 'custom', path: ['rateLimit', 'key'], message: problem });
  });

export type AgentConfig = z.output<typeof agentConfigSchema>;
export type AgentConfigInput = z.input<typeof agentConfigSchema>;

/** The key strategy in effect: the configured one or the placement's default; null without a limiter. */
export function effectiveKeyStrategy(cfg: AgentConfig): KeyStrategyName | null {
  return keyInEffect(cfg.rateLimit.placement, cfg.rateLimit.key);
}

/** Validates an already-merged config object (file values overlaid by flags). */
export function parseAgentConfig(input: unknown, what = ''): AgentConfig {
  return parseOrThrow(agentConfigSchema, input, what);
}

export function readAgentConfigFile(path: string): AgentConfigInput {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`--config ${path}: cannot read the file (${(err as Error).message})`);
  }
  try {
    return (parseYaml(text) ?? {}) as AgentConfigInput;
  } catch (err) {
    throw new ConfigError(`--config ${path}: not valid YAML (${(err as Error).message})`);
  }
}
