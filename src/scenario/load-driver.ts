// The seam between the runner and the load generator: what the runner needs from one load phase.
// The real driver (load-driver-storm.ts) wraps src/load's runLoad.
import type { BystanderRun, StormControl } from '../load/index.js';
import type { Sandbox } from '../sandbox/index.js';
import type { LatencySummary, LoadSample, Outcome } from '../contract/index.js';
import type { Scenario } from './schema.js';

export interface LoadPhaseOptions {
  scenario: Scenario;
  socket: string;
  sandbox: Sandbox;
  durationMs: number;
  signal: AbortSignal;
  /** Every second: that second's merged counts; `t` relative to `origin`. */
  onSecond(sample: LoadSample): void;
  /** Date.now() of the run's timeline zero (the load phase's start). */
  origin: number;
  /**
   * Date.now() when the workers were released, as it happens (pods are up), and the handle that
   * adds extra storm workers while the load runs (burst faults; absent when the generator cannot).
   */
  onCallsStarted?(at: number, storm?: StormControl): void;
  /** Awaited after the pods came up and before the calls start: the agent made ready to serve them (AgentTarget.podsServed). */
  beforeCalls?(): Promise<void>;
}

export interface LoadPhaseResult {
  counts: Record<Outcome, number>;
  /** Seconds of load actually run (short when interrupted). */
  loadSeconds: number;
  /** Date.now() when the calls started (after the pods came up). */
  callsStartedAt: number;
  histograms: Partial<Record<Outcome, string>>;
  workerMemoryBytes: number | null;
  /** Calls the workers started, worker processes started, and the CPU seconds they spent. */
  calls?: number;
  workersStarted?: number;
  workerCpuSeconds?: number;
  /** The workers' client as it ran; why it differs from the one asked for; workers that crashed. */
  client?: string;
  clientFallback?: string;
  workerCrashes?: number;
  /** Mean CPU of the generator's processes, the runner and the machine over the load, in cores. */
  cpu?: { generatorCores: number | null; runnerCores: number | null; machineBusyCores: number | null } | null;
  /** Calls the generator's series counts in a later second than they ended in (it fell behind). */
  late?: { calls: number; maxSeconds: number };
  /** The bystander pods' run, when the scenario has load.bystanders. */
  bystanders?: BystanderRun;
}

/** Where the load's processes run: on this machine the generator also checks the machine can hold them. */
export type LoadSite = 'local' | 'cluster';

export interface LoadDriver {
  /**
   * Validates the scenario's load block with the generator's own rules (before anything starts);
   * where the load runs on this machine, also that the machine can hold its processes.
   */
  validate(scenario: Scenario, where?: LoadSite): void;
  run(opts: LoadPhaseOptions): Promise<LoadPhaseResult>;
  /** Merges encoded histograms of several repetitions and summarizes them. */
  summarize(encoded: string[]): LatencySummary | null;
}
