// The agent under test, whatever it is: the reference agent, a real spire-agent, or one already
// running. Each kind is a plug-in (kind.ts, registry.ts); the variant runner sees only this interface.
import type { CgroupHost, Cgroup } from '../cgroup/index.js';
import type { DeathRecord, EventSample, VariantAgentRecord } from '../contract/index.js';
import type { Sampler } from '../sample/index.js';
import type { Sandbox } from '../sandbox/index.js';
import type { DeathVerdict } from './oom-detector.js';

/** What a target gets from the variant runner for one repetition. */
export interface TargetContext {
  variant: string;
  rep: number;
  /** The repetition's folder in the run folder: logs and generated configs go here. */
  dir: string;
  /** A private temp folder (sockets, data dirs); the runner removes it. */
  tmpDir: string;
  /** The run's id: cgroups live under attestorm/<runId>/. */
  runId: string;
  /** null: no writable memory cgroup (OOM kills are emulated by an RSS watchdog). */
  host: CgroupHost | null;
  /** Pin the agent's cgroup to these CPUs (scenario isolation); reference agents only. */
  agentCpus?: string;
  sandbox: Sandbox;
  signal: AbortSignal;
  /** Writes an event line on the repetition's timeline. */
  event(type: EventSample['type'], detail?: string): void;
  /** Every death of the agent that the runner did not ask for, as it happens. */
  onDeath(verdict: DeathVerdict): void;
  /** The scenario has faults: give the agent's cgroup the cpu and freezer controllers they need. */
  faultControls?: boolean;
}

export interface AgentTarget {
  /** The Workload API socket the load goes to (known once start() resolved). */
  readonly socket: string;
  /** The agent's memory limit in bytes (0 when unknown). */
  readonly limitBytes: number;
  /** Starts the agent (and whatever it needs) and resolves once it serves. */
  start(): Promise<void>;
  /** Samplers of this agent's memory and metrics, sampled on the run's timeline. */
  samplers(): Sampler[];
  /** The agent's memory cgroup, when it has one (faults and the final peak read it). */
  cgroup(): Cgroup | null;
  /** The agent's current PID, null while it is down. */
  pid(): number | null;
  /** OOM kills so far, restarts performed so far, downtime so far. */
  readonly oomKills: number;
  readonly restarts: number;
  downtimeMs(): number;
  /** The kernel's high-water mark of the agent's memory over this repetition, read now; null when unknown. */
  peakBytes(): number | null;
  /** Sends a fault's signal through the supervisor (recorded as a fault's kill, then restarted); absent for agents it does not own. */
  kill?(signal: 'SIGKILL' | 'SIGTERM'): void;
  /** What really ran (kind, binary, version, effective placement and key). */
  describe(): VariantAgentRecord;
  /**
   * Resolves once the agent can serve the pods running now, before their calls start (SPIRE: once
   * every pod's registration entry has reached the agent, proved by a JWT-SVID fetched from inside
   * the pod); absent when the agent identifies pods as they call. Returns early on an abort.
   */
  podsServed?(signal: AbortSignal): Promise<void>;
  /** Stops everything it started; idempotent. */
  stop(): Promise<void>;
  /** After stop() and the last readings: removes what it created for the agent (its cgroup, socket); absent when it created none. */
  release?(): Promise<void>;
}

export type { DeathRecord };
