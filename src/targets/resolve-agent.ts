// One variant's agent from the scenario: the shared agent block's keys its kind takes, the
// variant's own on top, checked against that kind's strict schema; problems carry the variant's path.
import { z } from 'zod';
import { deepMerge } from '../util/index.js';
import { DEFAULT_AGENT_KIND, TARGET_KINDS, targetKind, type AgentKindName, type VariantAgent } from './registry.js';

/** The shared block as written: every kind's keys (the first kind naming a key describes it). */
export function sharedAgentShape(): Record<string, z.ZodType> {
  const shape: Record<string, z.ZodType> = {};
  for (const k of TARGET_KINDS) for (const [key, schema] of Object.entries(k.shared)) if (!(key in shape)) shape[key] = schema as z.ZodType;
  return shape;
}

/** The phrase documenting agent.kind: every kind's summary. */
export function agentKindSummary(): string {
  return TARGET_KINDS.map((k) => k.summary).join('; ');
}

type AgentInput = { kind?: AgentKindName | undefined } & Record<string, unknown>;

/**
 * One variant's agent: the shared block's keys its kind understands, the variant's own on top,
 * checked against that kind's strict schema. Problems are reported with `where` as their path.
 */
export function resolveVariantAgent(shared: AgentInput, own: AgentInput, where: (string | number)[], ctx: z.RefinementCtx): VariantAgent | null {
  const kind = own.kind ?? shared.kind ?? DEFAULT_AGENT_KIND;
  const plugin = targetKind(kind);
  let inherited: Record<string, unknown> = {};
  for (const k of plugin.inherits) if (shared[k] !== undefined) inherited[k] = shared[k];
  if (plugin.inherit) inherited = plugin.inherit(inherited);
  const merged = deepMerge(inherited, { ...own, kind });
  const parsed = plugin.schema.safeParse(merged);
  if (parsed.success) return parsed.data as VariantAgent;
  for (const issue of parsed.error.issues) {
    const path = [...where, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
    if (issue.code === 'unrecognized_keys') {
      for (const k of issue.keys)
        ctx.addIssue({ code: 'custom', path: [...path, k], message: `is not a setting of a ${kind} agent, got ${JSON.stringify(merged[k])}` });
    } else {
      ctx.addIssue({ code: 'custom', path, message: issue.message });
    }
  }
  return null;
}
