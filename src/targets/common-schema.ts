// Settings every agent the harness starts has (memory limit, CPU share, the kubelet emulator its
// attestor talks to, restarts, start timeout).
import { z } from 'zod';
import { zBytes, zDuration, zNonNegInt, zSizeAsWritten } from '../util/index.js';
import { podListConflict, podListSchema } from './pod-list-schema.js';

export const cpuSchema = z
  .strictObject({
    mode: z
      .enum(['cgroup', 'nice', 'none'])
      .default('cgroup')
      .describe(
        "How the agent is given its CPU share against the load workers: cgroup = cpu weight of its cgroup (cpu.weight / cpu.shares, also set on the run's parent cgroups), nice = a process priority, none = left to the scheduler",
      ),
    weight: z
      .number()
      .int()
      .min(1)
      .max(10000)
      .default(1000)
      .describe("cgroup mode: the agent's cpu weight (cgroup v2 scale, 100 = default; v1 cpu.shares = weight × 10.24)"),
    nice: z.number().int().min(-20).max(19).default(-10).describe("nice mode: the agent's nice value (negative = favoured; needs root)"),
  })
  .describe('CPU share of the agent relative to the workers; on 2 cores hundreds of workers would otherwise starve it');
export type CpuShare = z.output<typeof cpuSchema>;

export const kubeletSchema = z
  .strictObject({
    latency: zDuration.default(0).describe('Extra latency of every kubelet GET /pods answer'),
    latencyModel: z
      .strictObject({
        base: zDuration.default(0).describe('Time every answer takes'),
        perConcurrent: zDuration.default(0).describe('Time more for each other GET /pods in flight when a request arrives'),
        perMiB: zDuration.default(0).describe("Time more for each MiB of the list's body"),
      })
      .optional()
      .describe(
        "A loaded kubelet's answer time, on top of latency: base + perConcurrent × the other requests in flight when one arrives + perMiB × the list's MiB; a modeled parameter, named in every report",
      ),
    serviceTime: zDuration
      .default(0)
      .describe(
        'Time the kubelet spends on each GET /pods answer, one request at a time (first come, first served), on top of latency: 0 = every answer takes just the latency; under a storm the queue grows and every later answer waits for the ones before it, including those whose caller gave up',
      ),
    failureRate: z.number().min(0).max(1).default(0).describe('Fraction of kubelet requests answered with HTTP 500'),
    visibilityDelay: zDuration
      .default(0)
      .describe("How long a new pod stays missing from the kubelet's /pods list; attestations of its callers poll meanwhile"),
    fillerPods: zNonNegInt('a non-negative integer')
      .optional()
      .describe("Other pods on the emulated node, padding the /pods document (about 1 MiB at 110 pods); default: up to the kubelet's 110"),
    tls: z.boolean().default(false).describe('Serve the kubelet API over HTTPS with a per-run self-signed CA'),
    token: z.string().min(1).optional().describe('Bearer token the kubelet requires (written to a token file the agent reads)'),
    podList: podListSchema.optional(),
  })
  .superRefine((k, ctx) => {
    const problem = podListConflict(k);
    if (problem) ctx.addIssue({ code: 'custom', path: ['podList', 'pods'], message: problem });
  })
  .describe('The kubelet emulator the k8s attestor talks to');
export type KubeletEmulation = z.output<typeof kubeletSchema>;

const restartSchema = z
  .strictObject({
    initialBackoff: zDuration.default(10_000).describe('Delay before the first restart after the agent dies (kubelet: 10s)'),
    maxBackoff: zDuration.default(300_000).describe('Cap of the doubling restart delay (kubelet: 5m)'),
    resetAfter: zDuration.default(600_000).describe('An agent that ran this long without dying resets the back-off (kubelet: 10m)'),
  })
  .describe('Restarting the agent after it dies, as a kubelet would');

/** The keys of every agent the harness starts itself (reference and spire). */
export const startedAgentShape = {
  memoryLimit: zBytes.default(128 * 2 ** 20).describe("Memory limit of the agent's cgroup (like the pod's resources.limits.memory)"),
  cpu: cpuSchema.default(cpuSchema.parse({})),
  kubelet: kubeletSchema.default(kubeletSchema.parse({})),
  restart: restartSchema.default(restartSchema.parse({})),
  startTimeout: zDuration.default(30_000).describe('How long the agent may take to become ready'),
};

/** The same keys in the scenario's shared agent block: as written, checked per variant by its kind. */
export const startedAgentSharedShape = {
  memoryLimit: zSizeAsWritten.optional().describe("Memory limit of the agent's cgroup (like the pod's resources.limits.memory); default 128Mi"),
  cpu: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(cpuSchema.description ?? ''),
  kubelet: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(kubeletSchema.description ?? ''),
  restart: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(restartSchema.description ?? ''),
  startTimeout: z.union([z.string(), z.number()]).optional().describe('How long the agent may take to become ready; default 30s'),
};
