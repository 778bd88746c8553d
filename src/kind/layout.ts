// Where kind mode keeps things on this host: a build cache outside the clone (the kind binary, the
// node image and its parts, keyed by version or recipe), and a Docker engine of its own (data root,
// exec root, socket) that `attestorm kind engine up|down` starts and stops.
import { join } from 'node:path';
import { VERSIONS } from '../local-cluster/index.js';

export const KIND_VERSIONS = {
  /** sigs.k8s.io/kind, built from its Go module; its base-image files come from the same module. */
  kind: 'v0.33.0',
  kubernetes: VERSIONS.kubernetes,
  /** What `kubeadm config images list` names for Kubernetes 1.34: the images are tagged so. */
  corednsTag: 'v1.12.1',
  coredns: 'v1.12.1',
  etcdTag: '3.6.5-0',
  etcd: VERSIONS.etcd,
  pauseTag: '3.10.1',
  localPath: 'v0.0.30',
  debianSuite: VERSIONS.debianSuite,
} as const;

export interface KindLayout {
  cacheDir: string;
  /** The kind binary built from its Go module. */
  kindBin: string;
  /** Component images (docker archives) and the rootfs of the base image. */
  partsDir: string;
  /** Finished node images as `docker save` archives, one per recipe key. */
  nodeImagesDir: string;
  dockerDataRoot: string;
  dockerExecRoot: string;
  dockerSocket: string;
  dockerConfig: string;
  dockerState: string;
  dockerLog: string;
  /** runc behind a filter that drops capabilities outside this host's bounding set. */
  runcWrapper: string;
}

export function kindLayout(env: NodeJS.ProcessEnv = process.env): KindLayout {
  const cacheDir = env.ATTESTORM_KIND_CACHE || '/var/cache/attestorm/kind';
  const dataDir = env.ATTESTORM_DOCKER_STATE || '/var/lib/attestorm/docker';
  const runDir = env.ATTESTORM_DOCKER_RUN || '/run/attestorm-docker';
  return {
    cacheDir,
    kindBin: join(cacheDir, `kind-${KIND_VERSIONS.kind}`, 'kind'),
    partsDir: join(cacheDir, 'parts'),
    nodeImagesDir: join(cacheDir, 'node-images'),
    dockerDataRoot: join(dataDir, 'data'),
    dockerExecRoot: join(runDir, 'exec'),
    dockerSocket: join(runDir, 'docker.sock'),
    dockerConfig: join(dataDir, 'daemon.json'),
    dockerState: join(dataDir, 'dockerd.json'),
    dockerLog: join(dataDir, 'dockerd.log'),
    runcWrapper: join(dataDir, 'runc-caps'),
  };
}

/** DOCKER_HOST for this layout's engine. */
export function dockerHost(l: KindLayout): string {
  return `unix://${l.dockerSocket}`;
}
