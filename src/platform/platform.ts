// Where a run's repetitions happen: this machine (local/: a sandbox of cgroups and a kubelet
// emulator) or a Kubernetes cluster (cluster/). The runner knows only this interface; what a
// platform needs beyond it (this machine's cgroups, a cluster's connection) it keeps to itself.
import type { IsolationRecord, RunEnvironment, RunResults, SampleLine, VariantAgentRecord } from '../contract/index.js';
import { RunError, type PreflightFailure } from '../errors.js';
import type { LoadDriver, LoadSite, RepMeasurement, Scenario, Variant } from '../scenario/index.js';

export type { LoadSite };

/** How the agents were measured, for results.json's environment. */
export type PlatformMeasurement = Pick<RunEnvironment, 'cgroupVersion' | 'oomFidelity' | 'podFidelity' | 'cpuShare' | 'cgroupDelegation'>;

/** What the runner hands every platform for one repetition of one variant. */
export interface RepetitionContext {
  scenario: Scenario;
  variant: Variant;
  runDir: string;
  runId: string;
  rep: number;
  load: LoadDriver;
  signal: AbortSignal;
  /** Live view for the progress display. */
  onSample?(line: SampleLine): void;
  /** What really ran (binary, version), once the agent has started. */
  onDescribe?(agent: VariantAgentRecord): void;
  /** Facts learned while the repetition ran (the pods' fidelity, the agent node's cgroup version), merged into results.json's environment. */
  onEnvironment?(patch: Partial<Pick<RunEnvironment, 'cgroupVersion' | 'podFidelity'>>): void;
  /** Facts about the platform (a cluster's server version, nodes, image digests), merged into results.json's platform.detail. */
  onPlatform?(detail: Record<string, unknown>): void;
}

/**
 * A repetition whose failure ends the whole run (a cluster's: its node or engine went away). It
 * carries what the repetition measured until then, with the failure as its error, so results.json
 * keeps the variant's record and says why the run ended.
 */
export class RunEndingFailure extends RunError {
  constructor(
    readonly measurement: RepMeasurement,
    cause: Error,
  ) {
    super(cause.message, { cause });
  }
}

/** The run on a platform once it is open: its repetitions, and what it made undone at the end. */
export interface PlatformRun {
  /**
   * Called once results.json says running, before the first repetition (on this machine: the runner
   * moves off the agents' CPUs). Returns the isolation record to write instead when the isolation
   * planned could not be applied (said on stderr), or null.
   */
  start(): IsolationRecord | null;
  /** One repetition of one variant: the same measurement from every platform. */
  runRepetition(ctx: RepetitionContext): Promise<RepMeasurement>;
  /** Whatever happened: everything the run made on this platform is undone and removed. */
  close(): Promise<void>;
}

/** A platform's run, checked against the scenario and this machine; nothing is made yet. */
export interface PreparedRun {
  /** How the agents are measured here, for results.json's environment. */
  measurement: PlatformMeasurement;
  /** The scenario's CPU isolation as planned here (applied or why not); null when it asks for none. */
  isolation: IsolationRecord | null;
  /** The run's own resources on this platform made (on this machine: the agents' socket folder). */
  open(runId: string): PlatformRun;
}

export interface Platform {
  /** results.json's platform: its name and what is known of it (a repetition may add to its detail). */
  readonly record: NonNullable<RunResults['platform']>;
  /** Where the load's processes run: the site the generator's own rules are checked for. */
  readonly loadSite: LoadSite;
  /** Every reason the scenario cannot run here (its variants, its faults), one message each; checked before anything starts. */
  problems(s: Scenario): string[];
  /**
   * What this machine must offer every run, before anything of it is written or started: throws
   * for a runtime base another user controls; returns every other need it lacks (sockets in the
   * runtime folder, loopback, the kubelet emulator, the metrics address), each a named failure.
   */
  checkMachine(s: Scenario): Promise<PreflightFailure[]>;
  /** Once the variants that can run are known: refuses what this platform cannot hold (no cgroups, CPUs it lacks), then readies what the run needs once. */
  prepare(s: Scenario): Promise<PreparedRun>;
}
