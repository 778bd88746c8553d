// The local cluster: real Kubernetes components run directly on this Linux host (containerd, etcd,
// the control plane, a kubelet), built from their Go modules into a cache, for Kubernetes mode
// without kind or a registry. `attestorm cluster up|status|down`.
export { clusterUp, type UpOptions, type UpResult } from './cluster-up.js';
export { clusterStatus, type ClusterStatus } from './cluster-status.js';
export { teardownCluster, findLeftovers, describeLeftovers, leftoverCount, type Leftovers } from './teardown.js';
export { clusterLayout, CONTEXT_NAME, PROJECT_IMAGE, PAUSE_IMAGE, VERSIONS, type ClusterLayout } from './layout.js';
export {
  ensureSpireImages,
  makePlannedSpireImages,
  planSpireImages,
  spireBinDirProblems,
  spireArchive,
  spireBuild,
  spireImageRefs,
  type SpireImagePair,
  type SpireImageSite,
  type SpireImagePlan,
} from './spire-images.js';
export { isLocalClusterContext } from './local-context.js';
export { startDaemon, stopDaemon, waitFor, logTail } from './daemons.js';
export { isOurs, type DaemonRecord } from './state.js';
export { sh, type ShResult } from './sh.js';
export { onPath } from './checks.js';
export {
  buildEtcd,
  buildKubernetes,
  etcdSteps,
  kubernetesSteps,
  kubernetesModuleDir,
  goEnv,
  toolsGo,
  KIND_K8S_COMMANDS,
  K8S_COMMANDS,
  type K8sCommand,
} from './build.js';
export { COLD_SECONDS, planLine, roughly, timedStep, type BuildStep } from './build-plan.js';
export { umociImage, tarLayout, pauseArchive, splitImage, projectArchive, projectImageKey, ensureNodeBase, NODE_BASE_IMAGE } from './images.js';
