// Where a cluster run puts its pods (scenario.cluster.topology) and what results.json records of
// the nodes beside the agent under test: the storm's node, the quiet node, the server.

/** single-node: everything on the agent's node. three-node: storm node, quiet node, server on the control plane. */
export const TOPOLOGIES = ['single-node', 'three-node'] as const;
export type Topology = (typeof TOPOLOGIES)[number];

/** Nodes a topology needs in the cluster. */
export const TOPOLOGY_NODES: Record<Topology, number> = { 'single-node': 1, 'three-node': 3 };

/** What a repetition measured on the storm's node: the agent under test beside the storm. */
export interface StormNodeRecord {
  node: string;
  /** The kernel's high-water mark of the agent pod's cgroup; null: unmeasured. */
  peakUsageBytes: number | null;
  peakWorkingSetBytes: number | null;
  oomKills: number;
  restarts: number;
}

/** The quiet node: a second agent of the same variant that no storm calls, and the bystanders beside it. */
export interface QuietNodeRecord {
  node: string;
  /** The highest working set and usage the kubelet reported for its agent pod (its stats every few seconds); null: no reading. */
  peakWorkingSetBytes: number | null;
  peakUsageBytes: number | null;
  oomKills: number;
  restarts: number;
  /** The bystanders' calls on this node over the load phase; null without bystanders. */
  bystanders: { calls: number; ok: number; successRatio: number } | null;
}

/** The server the agents attest to (spire-server on the control plane); null fields: unread. */
export interface ServerRecord {
  node: string;
  /** The server's pod, null for an agent that has no server (the reference agent). */
  pod: string | null;
  /** CPU seconds the server's pod used from the load's start to its end (kubelet stats). */
  cpuSeconds: number | null;
  /** Its highest one-interval CPU rate, in cores. */
  peakCores: number | null;
  peakWorkingSetBytes: number | null;
  /** Node attestations the server completed ("Agent attestation request completed" in its log), per node and during the load. */
  attestations: { total: number; duringLoad: number; byNode: Record<string, number> } | null;
}

/** One repetition of a three-node run: the three nodes side by side. */
export interface ClusterNodesRecord {
  rep: number;
  topology: Topology;
  storm: StormNodeRecord;
  quiet: QuietNodeRecord;
  server: ServerRecord;
}
