// What kind mode needs to know about one variant, independent of the scenario file's shape: the
// renderer and the orchestrator code against ClusterVariant, and clusterVariant() builds it from one of
// the scenario's variants (reference and spire agents; an external agent lives on this machine).
import type { GeneratorLoad } from '../../load/index.js';
import type { KeyStrategyName, PlacementName, Scenario, Variant } from '../../scenario/index.js';
import { spireLimiter, targetKind, type KubeletEmulation } from '../../targets/index.js';

export type ClusterAgentKind = 'reference' | 'spire';

export interface SpireImages {
  serverImage: string;
  agentImage: string;
}

export interface ClusterLoad {
  pods: number;
  workersPerPod: number;
  durationMs: number;
  warmupMs: number;
  /** What each storm pod's generator runs: its load options, written into its flags (GENERATOR_FLAGS). */
  generator: GeneratorLoad;
  /** load.bystanders: pods of their own running the same generator process with their settings; null without. */
  bystanders: ClusterBystanders | null;
}

export interface ClusterBystanders {
  pods: number;
  workersPerPod: number;
  /** same: the storm pods' uid; own: a uid of their own (an os-uid limiter key tells them apart). */
  uid: 'same' | 'own';
  /** The generator's load options with the bystander settings (one method, open-loop rate, own deadline and retry). */
  generator: GeneratorLoad;
}

export interface ClusterVariant {
  /** DNS-1123 label: part of the namespace name. */
  name: string;
  kind: ClusterAgentKind;
  memoryLimitBytes: number;
  placement: PlacementName | null;
  key: KeyStrategyName | null;
  rateLimits: Record<string, number>;
  /** Reference agent: its config YAML object (socket, kubelet and metrics are set by the renderer). */
  referenceConfig?: Record<string, unknown>;
  spire?: SpireImages;
  /** agent.kubelet.fillerPods: the node's other pods (filler pods bound to the agent's node); null: up to a full node. */
  fillerPods: number | null;
  /** agent.kubelet settings of the local emulator a cluster's real kubelet does not take, each as "key value". */
  kubeletNotApplied: string[];
  /** Environment variables added to the agent container's (SPIRE's agent.env). */
  agentEnv?: Record<string, string>;
}

export interface ClusterImages {
  /** The project's image (reference agent, generator pods). */
  project: string;
  spireServer: string;
  spireAgent: string;
}

export const DEFAULT_IMAGES: ClusterImages = {
  project: 'attestorm:dev',
  spireServer: 'ghcr.io/spiffe/spire-server:1.13.3',
  spireAgent: 'ghcr.io/spiffe/spire-agent:1.13.3',
};

/** Where the agent's socket lives on the node and in every pod that mounts the shared directory. */
export const SOCKET_DIR = '/run/attestorm/sockets';
export const SOCKET_FILE = 'agent.sock';

/** The storm pods' load options from the scenario's load block: the same keys `attestorm load` takes. */
export function stormGeneratorLoad(s: Scenario): GeneratorLoad {
  const l = s.load;
  return {
    socket: `${SOCKET_DIR}/${SOCKET_FILE}`,
    workersPerPod: l.workersPerPod,
    connection: l.connection,
    client: l.client,
    deadlineMs: l.deadline,
    retry: l.retry,
    audience: l.audience,
    methods: l.methods,
    ...(l.rate !== undefined ? { rate: l.rate } : {}),
  };
}

/** The bystander pods' load options: the storm's client and audience, everything else their own. */
export function bystanderGeneratorLoad(s: Scenario): GeneratorLoad | null {
  const b = s.load.bystanders;
  if (!b) return null;
  return {
    socket: `${SOCKET_DIR}/${SOCKET_FILE}`,
    workersPerPod: b.workersPerPod,
    connection: b.connection,
    client: s.load.client,
    deadlineMs: b.deadline,
    retry: b.retry,
    audience: s.load.audience,
    methods: { [b.method]: 1 },
    rate: b.rate,
  };
}

export function clusterLoad(s: Scenario): ClusterLoad {
  const b = s.load.bystanders;
  return {
    pods: s.load.pods,
    workersPerPod: s.load.workersPerPod,
    durationMs: s.duration,
    warmupMs: s.warmup,
    generator: stormGeneratorLoad(s),
    bystanders: b ? { pods: b.pods, workersPerPod: b.workersPerPod, uid: b.uid, generator: bystanderGeneratorLoad(s)! } : null,
  };
}

/** The kubelet emulator's settings that differ from its defaults: a cluster's kubelet is the real one. */
function kubeletNotApplied(k: KubeletEmulation): string[] {
  const out: string[] = [];
  if (k.latency) out.push(`latency ${k.latency} ms`);
  if (k.serviceTime) out.push(`serviceTime ${k.serviceTime} ms`);
  if (k.failureRate) out.push(`failureRate ${k.failureRate}`);
  if (k.visibilityDelay) out.push(`visibilityDelay ${k.visibilityDelay} ms`);
  if (k.tls) out.push('tls true');
  if (k.token !== undefined) out.push('token (set)');
  if (k.podList) out.push(`podList ${JSON.stringify(k.podList)} (the node's pods are its own, plus filler pods: agent.kubelet.fillerPods)`);
  return out;
}

/** One scenario variant as kind mode runs it; `images` gives the SPIRE images for spire variants. */
export function clusterVariant(
  v: Variant,
  images: SpireImages = { serverImage: DEFAULT_IMAGES.spireServer, agentImage: DEFAULT_IMAGES.spireAgent },
): ClusterVariant {
  // The kind says how it runs in a cluster (or why it cannot, as a ConfigError naming the variant).
  const spec = targetKind(v.agent.kind).cluster(v.agent, v.name, { socket: `${SOCKET_DIR}/${SOCKET_FILE}`, kubeletUrl: 'https://127.0.0.1:10250' });
  const kubelet = targetKind(v.agent.kind).kubelet(v.agent);
  // Only a SPIRE agent's renderer reads the SPIRE images.
  return { name: v.name, ...spec, kind: spec.kind as ClusterAgentKind, spire: images, kubeletNotApplied: kubelet ? kubeletNotApplied(kubelet) : [] };
}

/** Every variant of a scenario as kind mode runs it; an external variant is a ConfigError naming it. */
export function adaptScenario(s: Scenario, images?: SpireImages): ClusterVariant[] {
  return s.variants.map((v) => clusterVariant(v, images));
}

/** A SPIRE variant added by `kind render --spire`: the first variant's memory limit, the given rate limits. */
export function spireVariant(like: ClusterVariant, images: SpireImages, rateLimits: Record<string, number>, name = 'spire'): ClusterVariant {
  return {
    name,
    kind: 'spire',
    memoryLimitBytes: like.memoryLimitBytes,
    ...spireLimiter(rateLimits),
    rateLimits,
    spire: images,
    fillerPods: like.fillerPods,
    kubeletNotApplied: like.kubeletNotApplied,
  };
}
