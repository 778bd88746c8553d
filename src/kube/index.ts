// Kind mode: the scenarios as Kubernetes manifests, applied to a cluster and measured there.
export * from './variant.js';
export * from './names.js';
export * from './objects.js';
export { renderVariant, renderAgentSide, toYaml } from './render.js';
export { manifestProblems } from './manifest-checks.js';
export { renderScenario, renderContext, renderChecked, kindVariants, writeRendered } from './render-scenario.js';
export type { RenderOptions, RenderedVariant } from './render-scenario.js';
