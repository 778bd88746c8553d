// What kind mode needs to know about one variant, independent of the scenario file's shape: the
// renderer and the orchestrator code against KindVariant, and an adapter builds it from a Scenario.
// When scenarios grow `variants:` only adaptScenario changes.
import { ConfigError } from '../errors.js';
import { buildAgentConfig, scenarioPlacements, type Scenario } from '../scenario/index.js';

export type KindAgentKind = 'reference' | 'spire';
export type KindPlacement = 'pre-attestation' | 'post-attestation' | 'disabled';

export interface SpireImages {
  serverImage: string;
  agentImage: string;
}

export interface KindLoad {
  pods: number;
  workersPerPod: number;
  durationMs: number;
  warmupMs: number;
  /** The generator's own flags (connection, deadline, retry, methods, client, rate, audience). */
  generatorArgs: string[];
}

export interface KindVariant {
  /** DNS-1123 label: part of the namespace name. */
  name: string;
  kind: KindAgentKind;
  memoryLimitBytes: number;
  placement: KindPlacement | null;
  key: string | null;
  rateLimits: Record<string, number>;
  /** Reference agent: its config YAML object (socket, kubelet and metrics are set by the renderer). */
  referenceConfig?: Record<string, unknown>;
  spire?: SpireImages;
}

export interface KindImages {
  /** The project's image (reference agent, generator pods). */
  project: string;
  spireServer: string;
  spireAgent: string;
}

export const DEFAULT_IMAGES: KindImages = {
  project: 'attestorm:dev',
  spireServer: 'ghcr.io/spiffe/spire-server:1.13.3',
  spireAgent: 'ghcr.io/spiffe/spire-agent:1.13.3',
};

/** Where the agent's socket lives on the node and in every pod that mounts the shared directory. */
export const SOCKET_DIR = '/run/attestorm/sockets';
export const SOCKET_FILE = 'agent.sock';

/** Generator flags from the scenario's load block: the same keys `attestorm load` takes. */
export function generatorArgs(s: Scenario): string[] {
  const l = s.load;
  const args = ['--connection', l.connection, '--client', l.client, '--deadline', `${l.deadline}ms`, '--retry', l.retry, '--audience', l.audience];
  for (const [m, w] of Object.entries(l.methods)) args.push('--method', `${m}=${w}`);
  if (l.rate !== undefined) args.push('--rate', String(l.rate));
  return args;
}

export function kindLoad(s: Scenario): KindLoad {
  return { pods: s.load.pods, workersPerPod: s.load.workersPerPod, durationMs: s.duration, warmupMs: s.warmup, generatorArgs: generatorArgs(s) };
}

/**
 * Today's scenarios (placements list) as kind variants: one reference-agent variant per placement.
 * A scenario with an external target cannot run in a cluster (its socket is on this machine).
 */
export function adaptScenario(s: Scenario, opts: { spire?: SpireImages } = {}): KindVariant[] {
  if (s.target) {
    throw new ConfigError(`scenario ${s.name}: target (an external agent on this machine) cannot run in kind mode; remove target or run it locally`);
  }
  return scenarioPlacements(s).map((p) => {
    const placement = p as KindPlacement;
    const cfg = buildAgentConfig(s, placement, { socket: `${SOCKET_DIR}/${SOCKET_FILE}`, kubeletUrl: 'https://127.0.0.1:10250', tokenFile: null, caFile: null });
    return {
      name: placement,
      kind: 'reference',
      memoryLimitBytes: s.agent.memoryLimit,
      placement,
      key: placement === 'disabled' ? null : s.agent.keys[placement],
      rateLimits: { ...s.agent.rateLimits },
      referenceConfig: cfg,
      ...(opts.spire ? { spire: opts.spire } : {}),
    } satisfies KindVariant;
  });
}

/** A SPIRE variant (real spire-server and spire-agent) with the scenario's memory limit and rate limits. */
export function spireVariant(s: Scenario, images: SpireImages, name = 'spire'): KindVariant {
  return { name, kind: 'spire', memoryLimitBytes: s.agent.memoryLimit, placement: null, key: null, rateLimits: { ...s.agent.rateLimits }, spire: images };
}
