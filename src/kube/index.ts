// Kubernetes mode: the scenarios as Kubernetes manifests, applied to a cluster and measured there.
// By where the code runs: render/ builds the objects and checks them (a variant in, manifests out);
// host/ runs on this machine beside the runner (preflight, apply, watch, the pod-proxy collection,
// the samplers, faults, teardown); pod/ runs inside the project's pods (the generator's endpoint,
// the memory sampler). cluster-agent.ts is what each agent kind adds on both sides, and
// cgroup-memory.ts reads a memory cgroup for the host's kind-node reader and the sampler pod alike.
export * from './render/variant.js';
export { clusterAgent, clusterAgentOf } from './cluster-agent.js';
export type { ClusterAgent } from './cluster-agent.js';
export * from './render/names.js';
export * from './render/objects.js';
export { renderVariant, renderAgentSide, toYaml } from './render/variant-objects.js';
export { manifestProblems } from './render/manifest-checks.js';
export { renderScenario, renderContext, renderChecked, clusterVariants, writeRendered } from './render/scenario.js';
export type { RenderOptions, RenderedVariant } from './render/scenario.js';
export { parseClusterTarget, loadKubeConfig, DEFAULT_KIND_CLUSTER } from './host/cluster-target.js';
export type { ClusterTarget } from './host/cluster-target.js';
export { preflight, normalizeImage, imagesOf } from './host/preflight.js';
export type { PreflightResult } from './host/preflight.js';
export { applyObjects } from './host/apply.js';
export { AgentTracker, classifyTermination } from './host/agent-tracker.js';
export type { Death } from './host/agent-tracker.js';
export { startGenerator } from './pod/generator-server.js';
export type { GeneratorOptions, GeneratorFinal, GeneratorParts, RunningGenerator } from './pod/generator-server.js';
export { GeneratorCollector } from './host/generator-collector.js';
export { LoadPods } from './host/load-pods.js';
export type { LoadPodsResult } from './host/load-pods.js';
export { teardownVariant, cleanupCluster } from './host/teardown.js';
export { nodeCgroupRoot, KindAgentCgroup, podSliceCandidates, containerScopeName } from './host/kind-cgroup.js';
export type { NodeCgroupRoot } from './host/kind-cgroup.js';
export { readCgroupMemory } from './cgroup-memory.js';
export type { CgroupMemory } from './cgroup-memory.js';
export { runVariantInCluster } from './host/run-variant.js';
export type { RunVariantInClusterOptions } from './host/run-variant.js';
export { kindUp, kindDown, kindNode, kindConfig, runTool, type KindUpOptions } from './host/kind-cli.js';
export { openCluster, loopbackApiServer } from './host/open-cluster.js';
export type { OpenCluster } from './host/open-cluster.js';
export { fetchJwtSvidOnce, waitForSvid } from './pod/svid-probe.js';
export { clusterFaultProblems, clusterVersionProblems, clusterFaultActions, CLUSTER_FAULT_REFUSALS, RESIZE_MIN_MINOR } from './host/fault-cluster.js';
export type { ClusterFaultHooks } from './host/fault-cluster.js';
export { loadPod, bystanderArgv, generatorArgv, BYSTANDER_OWN_UID } from './render/generators.js';
export { startMemorySampler } from './pod/memory-sampler-server.js';
export type { MemoryReading, MemorySamplerOptions, RunningMemorySampler } from './pod/memory-sampler-server.js';
export { NodeCgroupReader, findPodDir, findContainerDir, cgroupFlavourAt } from './pod/node-cgroup-reader.js';
export { PodMemorySampler } from './host/sampler-pod-memory.js';
export { renderMemorySampler } from './render/memory-sampler.js';
export { clusterPlatform, clusterRunOptions, clusterScenarioProblems, clusterEnvironment, platformFacts } from './host/cluster-run.js';
export { removeSocketDirs, janitorPod, JANITOR_SCRIPT, SOCKET_PARENT } from './host/socket-janitor.js';
export { renderFillerPods, fillerCount, FILLER_SELECTOR } from './render/filler.js';
export { placeFillerPods } from './host/filler-pods.js';
export { waitForNodeImages } from './host/node-images.js';
