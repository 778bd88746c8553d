// A target kind as a plug-in: everything that differs between the reference agent, a real
// spire-agent and an agent already running, in one object per kind, chosen by a variant's agent.kind.
import type { z } from 'zod';
import type { CgroupHost } from '../cgroup/index.js';
import type { KeyStrategyName, PlacementName } from '../contract/index.js';
import type { FaultCapabilities } from '../fault/index.js';
import type { CpuShare, KubeletEmulation } from './common-schema.js';
import type { AgentTarget, TargetContext } from './target.js';

/** The effective limiter placement and key of a variant's agent; null when unknown or none. */
export interface LimiterChoice {
  placement: PlacementName | null;
  key: KeyStrategyName | null;
}

/** Where an agent lives in a cluster, as the manifest renderer lays it out. */
export interface ClusterLayout {
  /** The Workload API socket inside the agent pod (and every pod that mounts it). */
  socket: string;
  /** The kubelet the agent's attestor talks to. */
  kubeletUrl: string;
}

/** How a variant of this kind runs in a cluster: what the manifest renderer needs to know of it. */
export interface ClusterAgentSpec extends LimiterChoice {
  kind: string;
  memoryLimitBytes: number;
  rateLimits: Record<string, number>;
  /** Reference agent: its config YAML object (socket, kubelet and metrics are set by the renderer). */
  referenceConfig?: Record<string, unknown>;
  /** agent.kubelet.fillerPods: the node's other pods (filler pods bound to the agent's node); null: up to a full node. */
  fillerPods: number | null;
  /** Environment variables added to the agent container's (SPIRE's agent.env). */
  agentEnv?: Record<string, string>;
}

export interface TargetKind<A extends { kind: string } = { kind: string }, P = unknown> {
  readonly kind: A['kind'];
  /** One phrase for the scenario schema's description of agent.kind. */
  readonly summary: string;
  /** One variant's agent of this kind, after the shared block was merged in: strict, with defaults. */
  readonly schema: z.ZodType<A>;
  /** The keys this kind adds to the scenario's shared agent block, as written (the kind's schema checks them per variant). */
  readonly shared: z.ZodRawShape;
  /** The keys of the shared agent block a variant of this kind takes. */
  readonly inherits: readonly string[];
  /** Adjusts what a variant took from the shared block before its own keys go on top. */
  inherit?(taken: Record<string, unknown>): Record<string, unknown>;
  /** Where its limiter sits and what it keys on. */
  limiter(agent: A): LimiterChoice;
  /** The harness starts this agent in a cgroup of its own: false for an agent someone else runs. */
  readonly started: boolean;
  /** Scenario isolation may pin it to CPUs of its own. */
  readonly pinnable: boolean;
  /** The agent's CPU share; null when the harness does not start it. */
  cpu(agent: A): CpuShare | null;
  /** The kubelet emulator the agent's attestor talks to; null: the emulator's defaults. */
  kubelet(agent: A): KubeletEmulation | null;
  /** The Workload API socket, when known before anything starts (the load's options are checked with it). */
  socket?(agent: A): string;
  /** What the fault actions can do to this agent on this machine. */
  faults(variant: string, agent: A, host: CgroupHost | null, reason?: string): FaultCapabilities;
  /** Modeled costs it turns on, named in the results; absent or empty: none. */
  modeledCosts?(agent: A): Record<string, unknown>;
  /**
   * What the agent needs from this machine, checked before anything starts (a SPIRE variant's
   * binaries and release): skip the variant (saying why), or the problems found and the agent as
   * it will run. Absent: nothing to check. `where` prefixes each problem with the variant's path.
   */
  preflight?(agent: A, where: string, env: NodeJS.ProcessEnv): Promise<AgentPreflight<A>>;
  /** Work done once per run and shared by its repetitions (the reference agent's bundle). */
  prepare?(): Promise<P>;
  /** Its target for one repetition on this machine (nothing starts until start()). */
  start(agent: A, ctx: TargetContext, prepared: P | undefined): AgentTarget;
  /** How it runs in a cluster; a ConfigError naming the variant when it cannot. */
  cluster(agent: A, variant: string, layout: ClusterLayout): ClusterAgentSpec;
}

export type AgentPreflight<A> = { skip: string } | { problems: string[]; agent: A };

/** The agent settings type of a kind. */
export type AgentOf<K> = K extends TargetKind<infer A, infer _P> ? A : never;

/** Declares a kind with its types inferred (the registry holds them side by side). */
export function defineTargetKind<A extends { kind: string }, P = unknown>(kind: TargetKind<A, P>): TargetKind<A, P> {
  return kind;
}
