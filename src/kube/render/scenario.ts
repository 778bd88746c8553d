// A scenario's variants rendered for a cluster, checked, and (for `attestorm kind render`) written
// as one YAML file per variant.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../../errors.js';
import type { Scenario } from '../../scenario/index.js';
import { clusterAgent } from '../cluster-agent.js';
import { manifestProblems } from './manifest-checks.js';
import { namespaceName } from './names.js';
import { kindNodeRoles, type NodeRoles } from './topology.js';
import type { KubeObject, RenderContext } from './objects.js';
import { renderVariant, toYaml } from './variant-objects.js';
import { adaptScenario, DEFAULT_IMAGES, clusterLoad, spireVariant, type ClusterImages, type ClusterVariant } from './variant.js';

export interface RenderOptions {
  runId: string;
  rep?: number;
  images?: Partial<ClusterImages>;
  clusterName?: string;
  nodeName?: string;
  /** A three-node scenario's nodes; absent: kind's names for a cluster of `clusterName` (`attestorm kind render`). */
  nodes?: NodeRoles;
  trustDomain?: string;
  /** Add the memory-sampler pod (clusters that are not kind on this host). */
  memorySampler?: boolean;
  /** The API server on the node's loopback (RenderContext.hostApiServer). */
  hostApiServer?: { host: string; port: number };
  /** Add a SPIRE variant (real spire-server and spire-agent) after the scenario's own variants. */
  withSpire?: boolean;
}

export interface RenderedVariant {
  variant: ClusterVariant;
  ctx: RenderContext;
  objects: KubeObject[];
}

export function renderContext(s: Scenario, variant: ClusterVariant, opts: RenderOptions): RenderContext {
  const rep = opts.rep ?? 1;
  const clusterName = opts.clusterName ?? 'attestorm';
  const nodes = s.cluster.topology === 'three-node' ? (opts.nodes ?? kindNodeRoles(clusterName)) : undefined;
  return {
    runId: opts.runId,
    rep,
    namespace: namespaceName(opts.runId, variant.name, rep),
    variant,
    load: clusterLoad(s),
    images: { ...DEFAULT_IMAGES, ...opts.images },
    clusterName,
    ...(opts.nodeName ? { nodeName: opts.nodeName } : {}),
    ...(nodes ? { nodes } : {}),
    trustDomain: opts.trustDomain ?? 'example.org',
    ...(opts.memorySampler ? { memorySampler: true } : {}),
    ...(opts.hostApiServer ? { hostApiServer: opts.hostApiServer } : {}),
  };
}

/** Renders and checks one variant; a problem is a ConfigError listing every rule broken. */
export function renderChecked(ctx: RenderContext): KubeObject[] {
  const objects = renderVariant(ctx);
  const problems = manifestProblems(objects, ctx);
  if (problems.length) throw new ConfigError(problems.map((p) => `variant ${ctx.variant.name}: ${p}`));
  return objects;
}

export function clusterVariants(s: Scenario, opts: RenderOptions): ClusterVariant[] {
  const images = { ...DEFAULT_IMAGES, ...opts.images };
  const spire = { serverImage: images.spireServer, agentImage: images.spireAgent };
  const variants = adaptScenario(s, spire);
  // --spire adds a SPIRE variant unless one already runs SPIRE.
  if (opts.withSpire && !variants.some((v) => clusterAgent(v.kind).spireImages)) {
    const like = variants[0]!;
    variants.push(spireVariant(like, spire, like.rateLimits));
  }
  return variants;
}

export function renderScenario(s: Scenario, opts: RenderOptions): RenderedVariant[] {
  return clusterVariants(s, opts).map((variant) => {
    const ctx = renderContext(s, variant, opts);
    return { variant, ctx, objects: renderChecked(ctx) };
  });
}

/** Writes <dir>/<variant>.yaml per variant; returns the files written. */
export function writeRendered(rendered: RenderedVariant[], dir: string): string[] {
  mkdirSync(dir, { recursive: true });
  return rendered.map((r) => {
    const file = join(dir, `${r.variant.name}.yaml`);
    writeFileSync(file, `# attestorm kind render: variant ${r.variant.name}, namespace ${r.ctx.namespace}\n${toYaml(r.objects)}`);
    return file;
  });
}
