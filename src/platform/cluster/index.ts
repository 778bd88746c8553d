// The cluster platform: the runner's repetitions in a Kubernetes cluster, from this machine —
// connecting (open-cluster, cluster-target), the preflight, applying the objects src/kube renders,
// watching the agent pod, the load pods and their collection through the pod proxy, the samplers,
// the faults Kubernetes can express, and the teardown.
export { clusterPlatform, clusterScenarioProblems, clusterEnvironment, platformFacts } from './cluster-platform.js';
export { runVariantInCluster } from './cluster-repetition.js';
export type { RunVariantInClusterOptions } from './cluster-repetition.js';
export { parseClusterTarget, loadKubeConfig, DEFAULT_KIND_CLUSTER } from './cluster-target.js';
export type { ClusterTarget } from './cluster-target.js';
export { openCluster, loopbackApiServer } from './open-cluster.js';
export type { OpenCluster } from './open-cluster.js';
export { preflight, normalizeImage, imagesOf } from './preflight.js';
export type { PreflightResult } from './preflight.js';
export { applyObjects } from './apply.js';
export { AgentTracker, classifyTermination } from './agent-tracker.js';
export type { Death } from './agent-tracker.js';
export { GeneratorCollector } from './generator-collector.js';
export { LoadPods } from './load-pods.js';
export type { LoadPodsResult } from './load-pods.js';
export { teardownVariant, cleanupCluster } from './teardown.js';
export { clusterFaultProblems, clusterVersionProblems, clusterFaultActions, CLUSTER_FAULT_REFUSALS, RESIZE_MIN_MINOR } from './fault-cluster.js';
export type { ClusterFaultHooks } from './fault-cluster.js';
export { PodMemorySampler } from './sampler-pod-memory.js';
export { removeSocketDirs, janitorPod, JANITOR_SCRIPT, SOCKET_PARENT } from './socket-janitor.js';
export { placeFillerPods } from './filler-pods.js';
export { waitForNodeImages } from './node-images.js';
