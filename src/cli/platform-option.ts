// `--cluster`, `--context` and `--kubeconfig` of `run`, `sweep` and `stability`: where the
// repetitions run, declared once. Without them: this machine (the local platform).
import {
  clusterLayout,
  isLocalClusterContext,
  makePlannedSpireImages,
  planSpireImages,
  type SpireImagePlan,
  type SpireImageSite,
} from '../local-cluster/index.js';
import { kindLayout, loadSpireImagesIntoKind } from '../kind/index.js';
import { clusterPlatform, clusterScenarioProblems, openCluster, parseClusterTarget, waitForNodeImages } from '../platform/cluster/index.js';
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
        { site: spireImageSite(args), context },
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
      const log = (m: string) => process.stderr.write(`attestorm: ${m}\n`);
      const kindName = cluster.target.kindName;
      const spireImages = spirePlan?.binDirs.size
        ? await makePlannedSpireImages(
            clusterLayout(),
            spirePlan,
            log,
            // kind's nodes get the images by `kind load`; the local cluster's containerd imports them.
            kindName && spireImageSite(args) === 'kind' ? (dir) => loadSpireImagesIntoKind(kindLayout(), kindName, dir, log) : undefined,
          )
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

/** Where the scenario's SPIRE images can come from, by the cluster named. */
function spireImageSite(args: PlatformArgs): SpireImageSite {
  if (args.context !== undefined && isLocalClusterContext(args.context)) return 'local-cluster';
  return parseClusterTarget(args).kindName !== null ? 'kind' : 'elsewhere';
}

/** Flags that apply to local runs only. */
export function platformFlagProblems(choice: PlatformChoice, flags: { cpuBudget?: number | undefined }): string[] {
  if (choice.remote && flags.cpuBudget !== undefined)
    return ["--cpu-budget applies to local runs (the cluster's node sets its own CPU): drop it or --cluster/--context"];
  return [];
}
