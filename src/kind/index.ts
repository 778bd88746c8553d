// kind: on a host without a registry, kind mode's own Docker engine, the kind binary from its
// Go module, a node image built here from Debian's packages and the Kubernetes components `cluster
// up` builds, and `attestorm kind up` on top of them; the kind CLI's calls (kind-cli.ts), and the
// agent's memory cgroup inside a kind node read from this host (kind-cgroup.ts, its sampler), which
// the cluster platform uses when the cluster is kind.
export { kindLayout, dockerHost, KIND_VERSIONS, type KindLayout } from './layout.js';
export { engineUp, engineDown, engineRunning, engineEnv, type EngineUp } from './dockerd.js';
export { ensureKindBinary } from './kind-binary.js';
export { ensureNodeImage, nodeImageArchive, nodeImageRef, nodeImageKey, nodeImageSteps, NODE_IMAGE_NAME, type NodeImage } from './node-image.js';
export {
  kindClusterUp,
  engineForKind,
  chooseNodeImage,
  engineNodeBase,
  KIND_DEFAULT_NODE_IMAGE,
  type KindCluster,
  type KindClusterOptions,
} from './kind-up.js';
export { capsInMask, runcCapsScript } from './runc-caps.js';
export { containerdConfig, criBaseSpec } from './base-image.js';
export { podNetworkManifest, routesScript } from './pod-network.js';
export { kindUp, kindDown, kindNode, kindNodeContainer, kindConfig, runTool, type KindUpOptions, type NodeContainerState } from './kind-cli.js';
export { nodeCgroupRoot, KindAgentCgroup, podSliceCandidates, containerScopeName, type NodeCgroupRoot } from './kind-cgroup.js';
// Registers the kind node's memory sampler (createSampler('kind-cgroup-memory')).
import './sampler-kind-memory.js';
export type { KindMemorySampler } from './sampler-kind-memory.js';
export { loadSpireImagesIntoKind } from './spire-images-kind.js';
