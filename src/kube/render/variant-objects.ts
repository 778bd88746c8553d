// Everything one variant run applies, in apply order, and its YAML form for `attestorm kind render`.
import { stringify } from 'yaml';
import { clusterAgent } from '../cluster-agent.js';
import type { KubeObject, RenderContext } from './objects.js';
import { renderNamespace } from './base.js';
import { renderGenerators } from './generators.js';
import { renderMemorySampler } from './memory-sampler.js';

/** Agent side (namespace, RBAC, agent, and the memory sampler where asked) — applied and waited for before the generators. */
export function renderAgentSide(ctx: RenderContext): KubeObject[] {
  return [renderNamespace(ctx), ...clusterAgent(ctx.variant.kind).render(ctx), ...(ctx.memorySampler ? renderMemorySampler(ctx) : [])];
}

export function renderVariant(ctx: RenderContext): KubeObject[] {
  return [...renderAgentSide(ctx), ...renderGenerators(ctx)];
}

export function toYaml(objects: KubeObject[]): string {
  return objects.map((o) => `---\n${stringify(o)}`).join('');
}
