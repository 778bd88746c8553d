// A loaded kubelet's /pods answer time as a model: a base, plus a cost for every other request in
// flight when one arrives (a kubelet serving many lists at once answers each later), plus a cost
// per MiB of the list (serializing a larger list takes longer). Its parameters are modeled, not
// measured here: every report names them (agent.kubelet.latencyModel).
import { z } from 'zod';

export const latencyModelSchema = z.strictObject({
  /** ms every answer takes. */
  baseMs: z.number().min(0).max(600_000).default(0),
  /** ms more for each other /pods request in flight when this one arrives. */
  perConcurrentMs: z.number().min(0).max(60_000).default(0),
  /** ms more for each MiB of the answer's body. */
  perMiBMs: z.number().min(0).max(600_000).default(0),
});

export type LatencyModel = z.input<typeof latencyModelSchema>;
export type ResolvedLatencyModel = z.output<typeof latencyModelSchema>;

const MiB = 2 ** 20;

/** The model's answer time for a request that finds `others` requests in flight and answers `bytes`. */
export function modeledLatencyMs(model: ResolvedLatencyModel, others: number, bytes: number): number {
  return model.baseMs + model.perConcurrentMs * Math.max(0, others) + model.perMiBMs * (bytes / MiB);
}
