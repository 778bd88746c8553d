// An agent someone else runs, in a scenario: its socket, and its pid or cgroup to sample.
import { z } from 'zod';
import { zBytes, zPosInt } from '../../util/index.js';

/** An agent already running, storm only (no restarts, no limiter choice). */
export const externalAgentSchema = z
  .strictObject({
    kind: z.literal('external'),
    socket: z.string({ error: "must name the running agent's Workload API socket" }).min(1).describe('Workload API socket of an already running agent'),
    pid: zPosInt('a positive integer').optional().describe('PID of that agent, to sample VmRSS/VmHWM and notice its death'),
    cgroup: z.string().min(1).optional().describe('Absolute memory cgroup directory of that agent, to sample usage, peak and OOM kills'),
    memoryLimit: zBytes.optional().describe('Limit to report for it when the cgroup has none'),
  })
  .superRefine((t, ctx) => {
    if (t.pid === undefined && t.cgroup === undefined) {
      ctx.addIssue({ code: 'custom', message: "must name the agent's pid or cgroup so its memory can be sampled, got neither", path: [] });
    }
  });
export type ExternalAgent = z.output<typeof externalAgentSchema>;

/** The keys an external agent adds to the shared agent block (memoryLimit is every kind's). */
export const externalSharedShape = {
  socket: z.string().min(1).optional().describe('external: Workload API socket of an already running agent'),
  pid: zPosInt('a positive integer').optional().describe('external: PID of that agent'),
  cgroup: z.string().min(1).optional().describe('external: absolute memory cgroup directory of that agent'),
};

export const externalInherits = ['memoryLimit', 'socket', 'pid', 'cgroup'];
