// The scenarios as Kubernetes objects, and the programs inside the project's pods: render/ builds
// the objects and checks them (a variant in, manifests out); pod/ runs inside the pods (the
// generator's endpoint, the memory sampler). cluster-agent.ts is what each agent kind adds in a
// cluster, spire-entries.ts the registration entry SPIRE's generators need, and cgroup-memory.ts
// reads a memory cgroup for the kind node's reader on the host and the sampler pod alike. Running
// the scenarios in a cluster is the cluster platform's (src/platform/cluster).
export * from './render/variant.js';
export { clusterAgent, clusterAgentOf } from './cluster-agent.js';
export type { ClusterAgent } from './cluster-agent.js';
export * from './render/names.js';
export * from './render/objects.js';
export { renderVariant, renderAgentSide, toYaml } from './render/variant-objects.js';
export { manifestProblems } from './render/manifest-checks.js';
export { renderScenario, renderContext, renderChecked, clusterVariants, writeRendered } from './render/scenario.js';
export type { RenderOptions, RenderedVariant } from './render/scenario.js';
export { startGenerator } from './pod/generator-server.js';
export type { GeneratorOptions, GeneratorFinal, GeneratorParts, RunningGenerator } from './pod/generator-server.js';
export { readCgroupMemory } from './cgroup-memory.js';
export type { CgroupFlavour, CgroupMemory } from './cgroup-memory.js';
export { fetchJwtSvidOnce, waitForSvid } from './pod/svid-probe.js';
export { loadPod, renderGenerators, bystanderArgv, generatorArgv, BYSTANDER_OWN_UID } from './render/generators.js';
export { AGENT_NAME } from './render/agent-reference.js';
export { startMemorySampler } from './pod/memory-sampler-server.js';
export type { MemoryReading, MemorySamplerOptions, RunningMemorySampler } from './pod/memory-sampler-server.js';
export { NodeCgroupReader, findPodDir, findContainerDir, cgroupFlavourAt } from './pod/node-cgroup-reader.js';
export { renderMemorySampler } from './render/memory-sampler.js';
export { renderFillerPods, fillerCount, FILLER_SELECTOR } from './render/filler.js';
export { nodeRolesOf, kindNodeRoles, singleNodeOf, CONTROL_PLANE_TAINT } from './render/topology.js';
export type { NodeFacts } from './render/topology.js';
export { SPIRE_SERVER } from './render/agent-spire.js';
