// kind mode on a host without a registry: kind mode's own Docker engine, the kind binary from its
// Go module, a node image built here from Debian's packages and the Kubernetes components `cluster
// up` builds, and `attestorm kind up` on top of them.
export { kindLayout, dockerHost, KIND_VERSIONS, type KindLayout } from './layout.js';
export { engineUp, engineDown, engineRunning, engineEnv, type EngineUp } from './dockerd.js';
export { ensureKindBinary } from './kind-binary.js';
export { ensureNodeImage, nodeImageRef, nodeImageKey, NODE_IMAGE_NAME, type NodeImage } from './node-image.js';
export { kindClusterUp, engineForKind, chooseNodeImage, engineNodeBase, KIND_DEFAULT_NODE_IMAGE, type KindCluster, type KindClusterOptions } from './kind-up.js';
export { capsInMask, runcCapsScript } from './runc-caps.js';
export { containerdConfig, criBaseSpec } from './base-image.js';
export { podNetworkManifest, routesScript } from './pod-network.js';
