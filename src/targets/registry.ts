// The target kinds, chosen by a variant's agent.kind. A new kind is a folder beside reference/,
// spire/ and external/ exporting a TargetKind, and one entry in TARGET_KINDS.
import { ConfigError } from '../errors.js';
import { externalKind } from './external/index.js';
import type { AgentOf, LimiterChoice, TargetKind } from './kind.js';
import { referenceKind } from './reference/index.js';
import { spireKind } from './spire/index.js';
import type { AgentTarget, TargetContext } from './target.js';

/** Every kind, in the order the scenario schema documents them; the first is the default. */
export const TARGET_KINDS = [referenceKind, spireKind, externalKind] as const;

/** One variant's resolved agent, of any kind. */
export type VariantAgent = AgentOf<(typeof TARGET_KINDS)[number]>;
export type AgentKindName = VariantAgent['kind'];
export const AGENT_KINDS = TARGET_KINDS.map((k) => k.kind) as unknown as readonly [AgentKindName, ...AgentKindName[]];
export const DEFAULT_AGENT_KIND: AgentKindName = TARGET_KINDS[0].kind;

// The registry calls each kind with an agent of that kind: the pairing is by name, not by type.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyKind = TargetKind<any, any>;
const byName = new Map<string, AnyKind>(TARGET_KINDS.map((k) => [k.kind, k as AnyKind]));

export function targetKinds(): string[] {
  return [...byName.keys()];
}

/** The plug-in of a kind; a ConfigError naming the known kinds otherwise. */
export function targetKind(kind: string): AnyKind {
  const k = byName.get(kind);
  if (!k) throw new ConfigError(`agent.kind "${kind}" has no target; known: ${targetKinds().join(', ')}`);
  return k;
}

/** The effective limiter placement and key of a variant's agent (external: unknown). */
export function variantPlacement(a: { kind: string }): LimiterChoice {
  return targetKind(a.kind).limiter(a);
}

/** Modeled costs the scenario's variants turn on, by variant (reported with the results). */
export function modeledCosts(s: { variants: ReadonlyArray<{ name: string; agent: { kind: string } }> }): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const v of s.variants) {
    const kind = targetKind(v.agent.kind);
    // The emulated kubelet's answer time is modeled too, for every agent that asks the emulator.
    const kubelet = kind.kubelet(v.agent);
    const costs = {
      ...(kind.modeledCosts?.(v.agent) ?? {}),
      ...(kubelet ? { kubeletLatency: kubelet.latency, ...(kubelet.latencyModel ? { kubeletLatencyModel: kubelet.latencyModel } : {}) } : {}),
    };
    if (Object.keys(costs).length) out[v.name] = costs;
  }
  return out;
}

/** Makes the targets of one run: what each kind prepared once (the reference agent's bundle) goes into every repetition's target. */
export interface TargetMaker {
  create(agent: { kind: string }, ctx: TargetContext): AgentTarget;
}

/** Runs each kind's once-per-run preparation for the kinds these agents use. */
export async function prepareTargets(agents: ReadonlyArray<{ kind: string }>): Promise<TargetMaker> {
  const prepared = new Map<string, unknown>();
  for (const kind of new Set(agents.map((a) => a.kind))) {
    const k = targetKind(kind);
    if (k.prepare) prepared.set(kind, await k.prepare());
  }
  return { create: (agent, ctx) => targetKind(agent.kind).start(agent, ctx, prepared.get(agent.kind)) };
}

/** A target without a run's preparation (kinds that need one fail in start(), saying so). */
export function createTarget(agent: { kind: string }, ctx: TargetContext): AgentTarget {
  return targetKind(agent.kind).start(agent, ctx, undefined);
}
