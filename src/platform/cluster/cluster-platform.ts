// The cluster platform the scenario runner is handed by `--cluster/--context`: where the variants
// ran (with the preflight's facts: server version, nodes, image digests), how they were measured
// (the kernel's OOM kills and the kubelet's pod cgroups on the node, not this host's), and the
// repetition that runs in the cluster. A thin adapter over runVariantInCluster.
import type { RunEnvironment } from '../../contract/index.js';
import { ConfigError } from '../../errors.js';
import { faultScheduleProblems } from '../../fault/index.js';
import { kindNode, type NodeCgroupRoot } from '../../kind/index.js';
import { clusterVariant, type NodeRoles, type SpireImages } from '../../kube/index.js';
import { planIsolation, variantDirName, type Scenario } from '../../scenario/index.js';
import type { Platform, RepetitionContext } from '../platform.js';
import { runVariantInCluster } from './cluster-repetition.js';
import { clusterFaultProblems } from './fault-cluster.js';
import { scenarioNodeRoles, scenarioSingleNode } from './node-roles.js';
import type { OpenCluster } from './open-cluster.js';
import type { PreflightResult } from './preflight.js';

/** Why the scenario's CPU isolation cannot apply: the agents run on the cluster's nodes. */
const IN_A_CLUSTER = 'variants run in a cluster';

/** How a cluster run measures: OOM kills are the node kernel's, pods have the kubelet's cgroups. */
export function clusterEnvironment(
  cluster: Pick<OpenCluster, 'nodeCgroup'>,
): Pick<RunEnvironment, 'cgroupVersion' | 'oomFidelity' | 'podFidelity' | 'cpuShare'> {
  return {
    // kind: known from the node container's cgroup now; other clusters: from the memory-sampler pod's answer.
    cgroupVersion: cluster.nodeCgroup?.version ?? null,
    oomFidelity: 'cgroup-oom',
    podFidelity: 'cgroup-pods',
    cpuShare: "the agent pod's CPU request, no CPU limit (the cluster's scheduling)",
  };
}

/** The preflight's facts as results.json's platform.detail. */
export function platformFacts(facts: PreflightResult): Record<string, unknown> {
  return {
    serverVersion: facts.serverVersion,
    nodes: facts.nodes.map(({ images: _images, ...n }) => n),
    imageDigests: facts.digests,
    ...(facts.toPull.length ? { pulledByNode: facts.toPull } : {}),
  };
}

/** Why a scenario cannot run in a cluster: variants it cannot run there, faults it cannot express; `where` prefixes fault problems. */
export function clusterScenarioProblems(s: Scenario, where = ''): string[] {
  const problems: string[] = [];
  // An agent that lives on this machine cannot run there: named before anything starts.
  for (const v of s.variants) {
    try {
      clusterVariant(v);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(...err.problems);
    }
  }
  // Faults Kubernetes cannot express are named, not ignored.
  return [...problems, ...clusterFaultProblems(s.faults, where)];
}

/**
 * The cluster as the runner's platform: every repetition in its own namespace of the cluster.
 * `spireImages`: variant name → images made on this machine from the user's SPIRE build (the rest pull the public ones).
 */
export function clusterPlatform(cluster: OpenCluster, spireImages: ReadonlyMap<string, SpireImages> = new Map()): Platform {
  return {
    record: {
      name: cluster.target.kindName ? 'kind' : 'cluster',
      detail: { cluster: cluster.clusterName, context: cluster.target.context, ...(cluster.nodeImage ? { nodeImage: cluster.nodeImage } : {}) },
    },
    loadSite: 'cluster',
    problems: (s) => [...faultScheduleProblems(s.faults, s.duration), ...clusterScenarioProblems(s)],
    // Nothing of the run is made on this machine; the cluster's own preflight runs as a variant
    // starts (context, API server, nodes, images).
    checkMachine: () => Promise.resolve([]),
    prepare: async (s) => {
      // Still refused when this machine lacks the CPUs asked for, as a local run would be.
      const isolation = planIsolation(s, null, IN_A_CLUSTER).record;
      // A three-node scenario on a cluster that cannot hold it is refused here, before anything is written.
      const nodes = await scenarioNodeRoles(cluster.kc, s, cluster.target.context);
      // A single-node scenario in a cluster of several nodes runs on one of them.
      const node = await scenarioSingleNode(cluster.kc, s, cluster.target.context);
      // On kind the agent under test's memory is read through its node's container: the storm node's, or the run's node's.
      const agentNode = nodes?.storm ?? node;
      const nodeCgroup =
        agentNode && cluster.target.kindName && cluster.nodeCgroup
          ? (await kindNode(cluster.target.kindName, undefined, agentNode)).cgroup
          : cluster.nodeCgroup;
      return {
        measurement: clusterEnvironment(cluster),
        isolation,
        open: () => ({ start: () => null, runRepetition: (ctx) => runRepetition(ctx, nodes, node, nodeCgroup), close: async () => {} }),
      };
    },
  };

  function runRepetition(ctx: RepetitionContext, nodes: NodeRoles | null, node: string | null, nodeCgroup: NodeCgroupRoot | null) {
    const spire = spireImages.get(ctx.variant.name);
    return runVariantInCluster({
      kc: cluster.kc,
      clusterName: cluster.clusterName,
      scenario: ctx.scenario,
      variant: clusterVariant(ctx.variant, spire),
      ...(spire ? { localImages: [spire.serverImage, spire.agentImage] } : {}),
      hostApiServer: cluster.hostApiServer ?? null,
      runId: ctx.runId,
      rep: ctx.rep,
      runDir: ctx.runDir,
      dirName: variantDirName(ctx.variant.name, ctx.rep),
      nodeCgroup,
      nodes,
      nodeName: node,
      nodeContainer: cluster.nodeContainer,
      signal: ctx.signal,
      ...(ctx.onSample ? { onSample: ctx.onSample } : {}),
      onPreflight: (facts) => ctx.onPlatform?.(platformFacts(facts)),
      onCgroupVersion: (version) => ctx.onEnvironment?.({ cgroupVersion: version }),
    });
  }
}
