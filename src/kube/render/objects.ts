// The plain-object form of the manifests kind mode renders, and the context every renderer gets.
import type { ClusterImages, ClusterLoad, ClusterVariant } from './variant.js';

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [key: string]: unknown;
}

/** A three-node run's nodes (render/topology.ts places the pods on them). */
export interface NodeRoles {
  /** The worker with the agent under test and the storm's generator pods. */
  storm: string;
  /** The other worker: a second agent, not stormed, and the bystander pods. */
  quiet: string;
  /** The control plane: spire-server (SPIRE variants). */
  server: string;
}

export interface RenderContext {
  runId: string;
  rep: number;
  namespace: string;
  variant: ClusterVariant;
  load: ClusterLoad;
  images: ClusterImages;
  /** The cluster's name as spire-server's k8s_psat knows it (kind: the kind cluster name). */
  clusterName: string;
  /** Pin the agent and the generators to this node (the socket is a hostPath); absent: single-node cluster. */
  nodeName?: string;
  /** scenario.cluster.topology three-node: the storm's node, the quiet node and the server's (instead of nodeName). */
  nodes?: NodeRoles;
  trustDomain: string;
  /** Render the memory-sampler pod (memory of the agent on clusters whose nodes this host cannot read). */
  memorySampler?: boolean;
  /**
   * The API server as the node's host network reaches it, for clusters whose API server listens on
   * the node's loopback (no kube-proxy, no cluster DNS: the local cluster). spire-server then runs on
   * the host network with this address, and the agent dials it on loopback. Absent: Service and DNS.
   */
  hostApiServer?: { host: string; port: number };
}

/** Port of the generator pods' stats endpoint (reached through the API server's pod proxy). */
export const GENERATOR_PORT = 9100;
/** The memory-sampler pod (clusters that are not kind on this host) and the port of its readings. */
export const MEMORY_SAMPLER_POD = 'memory-sampler';
export const MEMORY_SAMPLER_PORT = 9101;
/** Where the sampler pod mounts its node's /sys/fs/cgroup (read-only). */
export const HOST_CGROUP_MOUNT = '/host/sys/fs/cgroup';
/** Port of the reference agent's metrics (host network). */
export const AGENT_METRICS_PORT = 9988;
/** Non-root uid of the project's image (the node image's `node` user). */
export const PROJECT_UID = 1000;
/** Where the project's image keeps the bundled CLI. */
export const PROJECT_CLI = '/app/dist/cli/main.mjs';

/** A memory quantity: Mi or Ki when exact, else bytes. */
export function quantity(bytes: number): string {
  if (bytes % 2 ** 20 === 0) return `${bytes / 2 ** 20}Mi`;
  if (bytes % 1024 === 0) return `${bytes / 1024}Ki`;
  return String(bytes);
}

/** Bytes of a Kubernetes memory quantity (the binary and decimal suffixes; no fractions needed here). */
export function quantityBytes(q: string | number): number | null {
  if (typeof q === 'number') return q;
  const m = /^(\d+)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(q);
  if (!m) return null;
  const mult: Record<string, number> = { '': 1, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12 };
  return Number(m[1]) * mult[m[2] ?? '']!;
}

export function meta(ctx: RenderContext, name: string, labels: Record<string, string>, namespaced = true): KubeObject['metadata'] {
  return namespaced ? { name, namespace: ctx.namespace, labels } : { name, labels };
}
