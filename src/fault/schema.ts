// The scenario key `faults`: a schedule of chaos actions, each `{ at, for?, action, ...parameters }`
// with `at` measured from the start of the load phase. Validated as a whole before anything starts.
import { z } from 'zod';
import { formatDuration, parseOrThrow, zBytes, zDuration } from '../util/index.js';

const MiB = 2 ** 20;

const zAt = z.union([z.string(), z.number()], { error: 'must be a duration since the load start, like 10s' }).pipe(zDuration);
// Present on every action so a `for` on an instantaneous one gets a clear message instead of "unknown key".
const zFor = z.union([z.string(), z.number()], { error: 'must be a duration, like 5s' }).pipe(zDuration).optional();
const zCount = (max: number) => z.number().int().min(1).max(max);

const agentKill = z
  .strictObject({
    action: z.literal('agent-kill'),
    at: zAt,
    for: zFor,
    signal: z.enum(['SIGKILL', 'SIGTERM']).default('SIGKILL'),
  })
  .describe('Kill the agent (SIGKILL, or SIGTERM); its supervisor restarts it with the crash-loop back-off');
const agentPause = z
  .strictObject({ action: z.literal('agent-pause'), at: zAt, for: zFor })
  .describe('Freeze the agent for `for` (cgroup freezer, or SIGSTOP/SIGCONT), as when its node stalls');
const memorySqueeze = z
  .strictObject({
    action: z.literal('memory-squeeze'),
    at: zAt,
    for: zFor,
    // Below a few MiB a Node agent cannot even start again; the kernel would refuse some values anyway.
    to: zBytes.refine((b) => b >= 4 * MiB, { message: 'must be at least 4Mi' }),
  })
  .describe("Lower the agent's memory limit to `to` for `for` (node memory pressure; the kernel may OOM-kill), then restore it");
const cpuThrottle = z
  .strictObject({
    action: z.literal('cpu-throttle'),
    at: zAt,
    for: zFor,
    // The CFS floor is 1 ms of quota per 100 ms period.
    cores: z.number().min(0.01).max(1024),
  })
  .describe("A CPU quota of `cores` on the agent's cgroup for `for`");
const kubeletLatency = z
  .strictObject({
    action: z.literal('kubelet-latency'),
    at: zAt,
    for: zFor,
    value: zDuration.refine((ms) => ms > 0 && ms <= 600_000, { message: 'must be more than 0 and at most 10m' }),
  })
  .describe('The kubelet answers `value` later than configured, for `for`');
const kubeletErrors = z
  .strictObject({ action: z.literal('kubelet-errors'), at: zAt, for: zFor, rate: z.number().min(0).max(1) })
  .describe('The kubelet answers a `rate` (0..1) of /pods requests with HTTP 500, for `for`');
const kubeletDown = z.strictObject({ action: z.literal('kubelet-down'), at: zAt, for: zFor }).describe('The kubelet refuses connections for `for`');
const kubeletStall = z
  .strictObject({ action: z.literal('kubelet-stall'), at: zAt, for: zFor })
  .describe('The kubelet accepts requests and never answers, for `for`');
const podChurn = z
  .strictObject({ action: z.literal('pod-churn'), at: zAt, for: zFor, count: zCount(1000) })
  .describe('`count` storm pods replaced at once by new ones (new UIDs, not yet listed by the kubelet)');
// Each slow client holds one file descriptor here and one in the agent.
const slowClients = z
  .strictObject({ action: z.literal('slow-clients'), at: zAt, for: zFor, count: zCount(5000) })
  .describe("`count` connections that open the agent's socket and never finish the HTTP/2 preface, held for `for`");
// The local platform starts the wave as new pods rather than more workers in the running pods: a
// deploy's new pods are what the agent must attest from scratch (new UIDs, not yet in the kubelet's list).
const burst = z
  .strictObject({ action: z.literal('burst'), at: zAt, for: zFor, workers: zCount(2000) })
  .describe(
    "`workers` extra storm workers join for `for` (a deploy wave): new storm pods (new UIDs, the storm's workload, listed by the kubelet after its visibility delay), as few as hold them at load.workersPerPod each; they call like the storm's and count as the storm's, and are deleted at the window's end",
  );

export const FAULT_ACTIONS = [
  'agent-kill',
  'agent-pause',
  'memory-squeeze',
  'cpu-throttle',
  'kubelet-latency',
  'kubelet-errors',
  'kubelet-down',
  'kubelet-stall',
  'pod-churn',
  'slow-clients',
  'burst',
] as const;
export type FaultAction = (typeof FAULT_ACTIONS)[number];

/** Actions that happen at one instant; every other action lasts `for`. */
export const INSTANT_ACTIONS: ReadonlySet<FaultAction> = new Set(['agent-kill', 'pod-churn']);

export const faultSchema = z.discriminatedUnion(
  'action',
  [agentKill, agentPause, memorySqueeze, cpuThrottle, kubeletLatency, kubeletErrors, kubeletDown, kubeletStall, podChurn, slowClients, burst],
  { error: (issue) => (issue.code === 'invalid_union' ? `must be one of ${FAULT_ACTIONS.join(', ')}` : undefined) },
);

/** Windows [at, at+for) that must not overlap: the same action twice, and down vs stall (both own the kubelet's listener). */
function conflictGroup(action: FaultAction): string {
  return action === 'kubelet-down' || action === 'kubelet-stall' ? 'kubelet-listener' : action;
}

const window = (f: { at: number; for?: number | undefined }) => `${formatDuration(f.at)}–${formatDuration(f.at + (f.for ?? 0))}`;

export const faultsSchema = z.array(faultSchema).superRefine((faults, ctx) => {
  faults.forEach((f, i) => {
    const instant = INSTANT_ACTIONS.has(f.action);
    if (instant && f.for !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: [i, 'for'],
        message: `(${f.action}) takes no \`for\`: it happens at one instant, got ${JSON.stringify(formatDuration(f.for))}`,
      });
    } else if (!instant && f.for === undefined) {
      ctx.addIssue({ code: 'custom', path: [i], message: `(${f.action}) needs \`for\`, how long the fault lasts (e.g. for: 5s), got nothing` });
    } else if (!instant && f.for === 0) {
      ctx.addIssue({ code: 'custom', path: [i, 'for'], message: `(${f.action}) must last more than 0, got 0` });
    }
  });
  faults.forEach((f, i) => {
    for (let j = 0; j < i; j++) {
      const g = faults[j]!;
      if (conflictGroup(f.action) !== conflictGroup(g.action)) continue;
      const overlap = INSTANT_ACTIONS.has(f.action) ? f.at === g.at : f.at < g.at + (g.for ?? 0) && g.at < f.at + (f.for ?? 0);
      if (!overlap) continue;
      const rule =
        f.action === g.action ? 'windows of the same action must not overlap' : 'kubelet-down and kubelet-stall must not overlap (both own the listener)';
      ctx.addIssue({
        code: 'custom',
        path: [i],
        message: `(${f.action}) overlaps faults[${j}] (${g.action}): ${rule}, got ${window(f)} and ${window(g)}`,
      });
    }
  });
});

export type FaultInput = z.input<typeof faultSchema>;
export type Fault = z.output<typeof faultSchema>;
export type FaultOf<A extends FaultAction> = Extract<Fault, { action: A }>;

/** Parses a `faults` list (durations to ms, sizes to bytes) or throws a ConfigError naming every problem. */
export function parseFaults(input: unknown, what = 'faults'): Fault[] {
  return parseOrThrow(faultsSchema, input, what);
}
