// A real spire-agent's settings in a scenario: its k8s attestor, binaries, SPIRE's experimental
// rate limits (never inherited: they are what is compared), extra configs, heap profiles.
import { z } from 'zod';
import { LIMITED_PLACEMENTS } from '../../contract/index.js';
import { zDuration, zNonNegInt, zPosInt } from '../../util/index.js';
import { startedAgentShape, startedAgentSharedShape } from '../common-schema.js';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const spireRateLimitsSchema = z
  .strictObject({
    fetch_x509_svid: zNonNegInt('a non-negative integer').optional(),
    fetch_jwt_svid: zNonNegInt('a non-negative integer').optional(),
    fetch_x509_bundles: zNonNegInt('a non-negative integer').optional(),
    fetch_jwt_bundles: zNonNegInt('a non-negative integer').optional(),
    stream_secrets: zNonNegInt('a non-negative integer').optional(),
    fetch_secrets: zNonNegInt('a non-negative integer').optional(),
  })
  .describe("SPIRE's agent.experimental.ratelimit block (calls or stream opens per second per selector set); never inherited from the shared agent");

const spireOnlyShape = {
  k8s: z
    .strictObject({
      pollInterval: zDuration.default(500).describe("poll_retry_interval of SPIRE's k8s workload attestor"),
      maxPollAttempts: zPosInt('a positive integer').default(60).describe("max_poll_attempts of SPIRE's k8s workload attestor"),
    })
    .default({ pollInterval: 500, maxPollAttempts: 60 })
    .describe('SPIRE k8s workload attestor settings'),
  binDir: z.string().min(1).optional().describe('Folder with spire-server and spire-agent; default $SPIRE_BIN_DIR, then PATH'),
  binDirEnv: z
    .string()
    .regex(ENV_NAME, 'must be an environment variable name (letters, digits, "_")')
    .optional()
    .describe(
      "Environment variable naming this variant's binary folder (binDir wins when both are given); when it is unset or empty the variant is skipped, named with the reason, and the others run",
    ),
  release: z
    .string()
    .regex(/^\d+\.\d+\.\d+$/, 'must be a SPIRE version such as 1.15.3')
    .optional()
    .describe("The SPIRE release this variant means: the agent's --version must name it, checked before anything starts"),
  limiterPlacement: z
    .enum(LIMITED_PLACEMENTS)
    .default('post-attestation')
    .describe(
      'Where this build\'s Workload API limiter sits: post-attestation (SPIRE as released, keyed by the selector set) or pre-attestation (a build with the limiter moved before attestation, keyed by pod UID, else OS uid, which must say so in its "rate limiting enabled" log line)',
    ),
  rateLimits: spireRateLimitsSchema.optional(),
  extraAgentConfig: z
    .record(z.string(), z.unknown())
    .default({})
    .describe('Extra spire-agent config (the agent block and plugins), deep-merged into the generated config'),
  extraServerConfig: z.record(z.string(), z.unknown()).default({}).describe('Extra spire-server config, deep-merged into the generated config'),
  env: z
    .record(z.string(), z.string())
    .superRefine((env, ctx) => {
      for (const name of Object.keys(env)) {
        if (!ENV_NAME.test(name))
          ctx.addIssue({ code: 'custom', path: [name], message: `"${name}" must be an environment variable name (letters, digits, "_")` });
      }
    })
    .default({})
    .describe(
      "Environment variables added to spire-agent's own (its Go runtime's GOMAXPROCS, GOGC, GODEBUG; grpc-go's GRPC_GO_* settings): part of what the variant runs with, recorded in results.json's agent record",
    ),
  heapProfiles: zDuration
    .refine((ms) => ms >= 1000, 'must be at least 1s')
    .optional()
    .describe(
      "Every this often, the agent's Go heap profile is saved to the repetition's folder (spire-heap-<t>ms.pb.gz, for go tool pprof): turns on SPIRE's profiling endpoint on a loopback port. Off when absent",
    ),
  goroutineProfiles: zDuration
    .refine((ms) => ms >= 1000, 'must be at least 1s')
    .optional()
    .describe(
      "Every this often, the agent's goroutine profile (/debug/pprof/goroutine?debug=1: stacks with counts) is saved to the repetition's folder (spire-goroutines-<t>ms.txt.gz) and summed by owner into results.json: turns on SPIRE's profiling endpoint on a loopback port. Absent: as often as heapProfiles, off without it",
    ),
};

/** A real spire-agent (with its own spire-server), run from the user's binaries. */
export const spireAgentSchema = z.strictObject({
  kind: z.literal('spire'),
  ...startedAgentShape,
  ...spireOnlyShape,
});
export type SpireAgent = z.output<typeof spireAgentSchema>;

/** A SPIRE variant's limiter is part of what is compared: rateLimits is never inherited. */
export const spireInherits = [
  ...Object.keys(startedAgentShape),
  'k8s',
  'binDir',
  'extraAgentConfig',
  'extraServerConfig',
  'env',
  'heapProfiles',
  'goroutineProfiles',
];

/** The keys SPIRE adds to the shared agent block (k8s, memoryLimit … are the reference agent's too). */
export const spireSharedShape = {
  ...startedAgentSharedShape,
  k8s: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(spireOnlyShape.k8s.description ?? ''),
  binDir: z.string().min(1).optional().describe('spire: folder with spire-server and spire-agent; default $SPIRE_BIN_DIR, then PATH'),
  binDirEnv: z.string().min(1).optional().describe('spire: environment variable naming the binary folder; unset: the variant is skipped'),
  release: z.string().min(1).optional().describe("spire: the SPIRE release the agent's --version must name"),
  limiterPlacement: z
    .string()
    .min(1)
    .optional()
    .describe("spire: where the build's limiter sits (post-attestation as released, pre-attestation for a patched build)"),
  extraAgentConfig: z.record(z.string(), z.unknown()).optional().describe('spire: extra spire-agent config, deep-merged'),
  extraServerConfig: z.record(z.string(), z.unknown()).optional().describe('spire: extra spire-server config, deep-merged'),
  env: z.record(z.string(), z.string()).optional().describe("spire: environment variables added to spire-agent's own"),
  heapProfiles: z.union([z.string(), z.number()]).optional().describe("spire: save the agent's Go heap profile this often (e.g. 5s)"),
  goroutineProfiles: z
    .union([z.string(), z.number()])
    .optional()
    .describe("spire: save the agent's goroutine profile this often (e.g. 2s); default: as often as heapProfiles"),
};

/** SPIRE's k8s attestor has no shared fetches: a shared k8s block's shareFetches is not for it. */
export function spireInherit(taken: Record<string, unknown>): Record<string, unknown> {
  if (!taken.k8s) return taken;
  const { shareFetches: _ignored, ...rest } = taken.k8s as Record<string, unknown>;
  return { ...taken, k8s: rest };
}
