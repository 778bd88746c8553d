// The rest of the cluster in a three-node repetition: the quiet node's agent (the same DaemonSet's
// pod on the other worker, which no storm calls) followed like the agent under test, its and
// spire-server's memory and CPU from their kubelets' stats, and the node attestations spire-server
// completed. At the end: the storm node, the quiet node and the server side by side.
import { CoreV1Api, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import type { ClusterNodesRecord, StormNodeRecord } from '../../contract/index.js';
import { SPIRE_SERVER, type NodeRoles } from '../../kube/index.js';
import type { EventSample } from '../../scenario/index.js';
import { AgentTracker } from './agent-tracker.js';
import { nodeSummary, podStatOf, PodStatTrack } from './node-stats.js';
import { countAttestations } from './server-attestations.js';

/** How often the kubelets' stats are read (they refresh about every 10 s). */
const STATS_MS = 2000;

export interface ClusterNeighboursOptions {
  kc: KubeConfig;
  namespace: string;
  nodes: NodeRoles;
  /** The variant runs a server of its own (spire-server) whose pod is measured. */
  server: boolean;
  /** Node UID → node name (the server's log names agents by their node's UID). */
  nodeNames: ReadonlyMap<string, string>;
  event(type: EventSample['type'], detail?: string): void;
}

export class ClusterNeighbours {
  readonly quiet: AgentTracker;
  readonly #o: ClusterNeighboursOptions;
  readonly #quietStats = new PodStatTrack();
  readonly #serverStats = new PodStatTrack();
  #quietPod: string | null = null;
  #serverPod: string | null = null;
  #timer: NodeJS.Timeout | null = null;
  #polling: Promise<void> | null = null;
  #loadStart: number | null = null;
  #loadEnd: number | null = null;

  constructor(o: ClusterNeighboursOptions) {
    this.#o = o;
    this.quiet = new AgentTracker({
      container: 'agent',
      event: (type, detail) => {
        // The quiet agent's deaths and restarts are on the timeline, said to be its.
        if (type === 'oom-kill' || type === 'agent-exit' || type === 'agent-restart')
          o.event('note', `quiet node ${o.nodes.quiet}: agent ${type} ${detail ?? ''}`.trim());
      },
    });
  }

  /** The quiet node's agent pod (null until the watch saw it bound there). */
  get quietPod(): string | null {
    return this.#quietPod;
  }

  /** An agent pod from the watch: true when it is the quiet node's (the caller then leaves it alone). */
  observeAgent(pod: V1Pod): boolean {
    if (pod.spec?.nodeName !== this.#o.nodes.quiet) return false;
    this.#quietPod = pod.metadata?.name ?? this.#quietPod;
    this.quiet.observe(pod);
    return true;
  }

  /** Starts reading the kubelets' stats (the server's pod is looked up once). */
  start(): void {
    this.#timer = setInterval(() => {
      // A missed reading is a gap, not a failure: the next one is 2 s later.
      this.#polling ??= this.#poll()
        .catch(() => undefined)
        .finally(() => (this.#polling = null));
    }, STATS_MS);
  }

  markLoad(start: number, end: number): void {
    this.#loadStart = start;
    this.#loadEnd = end;
  }

  async #poll(): Promise<void> {
    const { kc, namespace, nodes } = this.#o;
    if (this.#quietPod) {
      const s = podStatOf(await nodeSummary(kc, nodes.quiet), namespace, this.#quietPod);
      if (s) this.#quietStats.add(s);
    }
    if (!this.#o.server) return;
    this.#serverPod ??= await this.#findServerPod();
    if (this.#serverPod) {
      const s = podStatOf(await nodeSummary(kc, nodes.server), namespace, this.#serverPod);
      if (s) this.#serverStats.add(s);
    }
  }

  async #findServerPod(): Promise<string | null> {
    const { kc, namespace } = this.#o;
    const pods = await kc
      .makeApiClient(CoreV1Api)
      .listNamespacedPod({ namespace, labelSelector: `attestorm.dev/role=${SPIRE_SERVER}` })
      .catch(() => null);
    return pods?.items[0]?.metadata?.name ?? null;
  }

  /** Stops the stats (after one last reading) and reads the server's log; the three nodes as results.json records them. */
  async finish(rep: number, storm: Omit<StormNodeRecord, 'node'>, bystanders: { calls: number; ok: number } | null): Promise<ClusterNodesRecord> {
    if (this.#timer) clearInterval(this.#timer);
    await this.#polling;
    await this.#poll().catch(() => undefined);
    const { nodes } = this.#o;
    const from = this.#loadStart ?? 0;
    const to = this.#loadEnd ?? Date.now();
    return {
      rep,
      topology: 'three-node',
      storm: { node: nodes.storm, ...storm },
      quiet: {
        node: nodes.quiet,
        peakWorkingSetBytes: this.#quietStats.peakWorkingSetBytes,
        peakUsageBytes: this.#quietStats.peakUsageBytes,
        oomKills: this.quiet.oomKills,
        restarts: this.quiet.restarts,
        bystanders: bystanders ? { ...bystanders, successRatio: bystanders.calls ? bystanders.ok / bystanders.calls : 0 } : null,
      },
      server: {
        node: nodes.server,
        pod: this.#o.server ? this.#serverPod : null,
        cpuSeconds: this.#o.server ? this.#serverStats.cpuSeconds(from, to) : null,
        peakCores: this.#o.server ? this.#serverStats.peakCores : null,
        peakWorkingSetBytes: this.#o.server ? this.#serverStats.peakWorkingSetBytes : null,
        attestations: this.#o.server ? await this.#attestations(from) : null,
      },
    };
  }

  async #attestations(since: number): Promise<ClusterNodesRecord['server']['attestations']> {
    if (!this.#serverPod) return null;
    const { kc, namespace } = this.#o;
    const log = await kc
      .makeApiClient(CoreV1Api)
      .readNamespacedPodLog({ name: this.#serverPod, namespace, container: SPIRE_SERVER })
      .catch(() => null);
    return log === null ? null : countAttestations(log, this.#o.nodeNames, since);
  }
}
