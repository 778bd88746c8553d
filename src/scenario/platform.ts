// Where a run's repetitions happen: this machine (a sandbox of cgroups and a kubelet emulator, see
// platform-local.ts) or a Kubernetes cluster (src/kube's clusterPlatform). The runner knows only this.
import type { CgroupHost } from '../cgroup/index.js';
import type { RunEnvironment, RunResults } from '../contract/index.js';
import type { RepMeasurement } from './aggregate.js';
import type { Scenario } from './schema.js';
import type { VariantRunContext } from './variant-run.js';

/** How the agents were measured, for results.json's environment. */
export type PlatformMeasurement = Pick<RunEnvironment, 'cgroupVersion' | 'oomFidelity' | 'podFidelity' | 'cpuShare' | 'cgroupDelegation'>;

/** This machine's part in a run: the cgroups agents get here, or why none. */
export interface AgentHost {
  /** null: no writable cgroup hierarchy here, or the agents do not run here. */
  host: CgroupHost | null;
  /** Why `host` is null. */
  reason: string | null;
  /** Said on stderr before the run (how this machine falls short), or null. */
  note: string | null;
  /** The agents run on other machines: why this machine's CPU isolation cannot apply; null when it can. */
  isolationRefusal: string | null;
}

export interface Platform {
  /** results.json's platform: its name and what is known of it (a repetition may add to its detail). */
  readonly record: NonNullable<RunResults['platform']>;
  /** The load's processes run on this machine (its capacity is checked before the run). */
  readonly loadHere: boolean;
  /** Every reason the scenario cannot run here (its variants, its faults), one message each; checked before anything starts. */
  problems(s: Scenario): string[];
  /** The cgroups this machine gives the scenario's agents. */
  agentHost(s: Scenario): AgentHost;
  /** How the agents are measured here; `cpuShare` is what the variants asked for on this machine. */
  measurement(host: CgroupHost | null, cpuShare: string): PlatformMeasurement;
  /** One repetition of one variant: the same measurement from every platform. */
  runRepetition(ctx: VariantRunContext): Promise<RepMeasurement>;
}
