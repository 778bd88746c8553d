// `--cluster`, `--context` and `--kubeconfig` of `run`, `sweep` and `stability`: where the
// repetitions run, declared once. Without them: this machine (the local platform).
import { clusterLayout, isLocalClusterContext, makePlannedSpireImages, planSpireImages, type SpireImagePlan } from '../local-cluster/index.js';
import { clusterPlatform, clusterScenarioProblems, openCluster, waitForNodeImages } from '../platform/cluster/index.js';
import { type SpireImages } from '../kube/index.js';
import { localPlatform, type Platform } from '../platform/index.js';
import { type LoadedScenario } from '../scenario/index.js';

export interface PlatformArgs {
  cluster?: string;
  context?: string;
  kubeconfig?: string;
}

export const platformOptions = {
  cluster: {
    type: 'string',
    describe: 'Run every variant in a kind cluster instead of the local sandbox: kind or kind:<name> (default name attestorm; see attestorm kind up)',
  },
  context: {
    type: 'string',
    describe: "Run every variant in the cluster of this kubeconfig context (the agent's memory is read by a memory-sampler pod on its node)",
  },
  kubeconfig: { type: 'string', describe: 'Kubeconfig file for --cluster/--context. Default: KUBECONFIG, else ~/.kube/config' },
} as const;

/** The platform the flags choose: checked against each scenario before anything starts, opened once. */
export interface PlatformChoice {
  /** The variants run somewhere other than this machine. */
  readonly remote: boolean;
  /** Why these scenarios cannot run there: every problem, fault problems prefixed with their file. */
  problems(scenarios: ReadonlyArray<Pick<LoadedScenario, 'scenario' | 'file'>>): string[];
  /** Connects (a cluster is checked before anything is applied; failures exit 3) and makes what the scenarios checked need. */
  open(): Promise<Platform>;
}

export function choosePlatform(args: PlatformArgs): PlatformChoice {
  if (args.cluster === undefined && args.context === undefined) {
    return { remote: false, problems: () => [], open: async () => localPlatform };
  }
  // SPIRE variants on the local cluster run images made from the user's binaries (it cannot pull).
  let spirePlan: SpireImagePlan | null = null;
  return {
    remote: true,
    problems(scenarios) {
      const problems = scenarios.flatMap((l) => clusterScenarioProblems(l.scenario, `${l.file ?? l.scenario.name}: `));
      const context = args.context !== undefined ? `context ${args.context}` : `--cluster ${args.cluster}`;
      spirePlan = planSpireImages(
        scenarios.flatMap((l) => l.scenario.variants),
        { localCluster: args.context !== undefined && isLocalClusterContext(args.context), context },
      );
      return [...problems, ...spirePlan.problems];
    },
    async open() {
      const cluster = await openCluster({
        ...(args.cluster ? { cluster: args.cluster } : {}),
        ...(args.context ? { context: args.context } : {}),
        ...(args.kubeconfig ? { kubeconfig: args.kubeconfig } : {}),
      });
      if (cluster.note) process.stderr.write(`attestorm: ${cluster.note}\n`);
      const spireImages = spirePlan?.binDirs.size
        ? await makePlannedSpireImages(clusterLayout(), spirePlan, (m) => process.stderr.write(`attestorm: ${m}\n`))
        : new Map<string, SpireImages>();
      if (spireImages.size)
        await waitForNodeImages(
          cluster.kc,
          [...spireImages.values()].flatMap((p) => [p.serverImage, p.agentImage]),
        );
      return clusterPlatform(cluster, spireImages);
    },
  };
}

/** Flags that apply to local runs only. */
export function platformFlagProblems(choice: PlatformChoice, flags: { cpuBudget?: number | undefined }): string[] {
  if (choice.remote && flags.cpuBudget !== undefined)
    return ["--cpu-budget applies to local runs (the cluster's node sets its own CPU): drop it or --cluster/--context"];
  return [];
}
