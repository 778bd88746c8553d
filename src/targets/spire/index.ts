// A real spire-agent as a target kind: its placement follows from SPIRE's rate limits; started
// locally from the user's binaries with a spire-server of its own, in a cluster from SPIRE's images.
import { builtinCapabilities } from '../../fault/index.js';
import { preflightSpireVariant } from '../../spire/index.js';
import { defineTargetKind } from '../kind.js';
import { spireLimiter } from './limiter.js';
import { spireTarget } from './local.js';
import { spireAgentSchema, spireInherit, spireInherits, spireSharedShape, type SpireAgent } from './schema.js';

/** The limits as given (0 included: the renderer writes what the variant says). */
function givenLimits(a: SpireAgent): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, n] of Object.entries(a.rateLimits ?? {})) if (n !== undefined) out[k] = n;
  return out;
}

export const spireKind = defineTargetKind<SpireAgent>({
  kind: 'spire',
  summary: 'spire: real spire-agent + spire-server',
  schema: spireAgentSchema,
  shared: spireSharedShape,
  inherits: spireInherits,
  inherit: spireInherit,
  limiter: (a) => spireLimiter(a.rateLimits, a.limiterPlacement),
  started: true,
  pinnable: false,
  cpu: (a) => a.cpu,
  kubelet: (a) => a.kubelet,
  faults: (variant, _a, host, reason) => builtinCapabilities(variant, host, reason),
  preflight: async (a, where, env) => {
    const checked = await preflightSpireVariant(a, where, env);
    // The folder that was checked is the one that runs.
    return checked.kind === 'skip' ? { skip: checked.reason } : { problems: checked.problems, agent: { ...a, binDir: checked.binDir } };
  },
  start: (a, ctx) => spireTarget(a, ctx),
  cluster: (a) => ({
    kind: 'spire',
    memoryLimitBytes: a.memoryLimit,
    ...spireLimiter(a.rateLimits, a.limiterPlacement),
    rateLimits: givenLimits(a),
    fillerPods: a.kubelet.fillerPods ?? null,
    ...(Object.keys(a.env).length ? { agentEnv: a.env } : {}),
  }),
});

export { spireLimiter } from './limiter.js';
export { SPIRE_PROBE_GID, spireTarget } from './local.js';
export type { SpireAgent } from './schema.js';
