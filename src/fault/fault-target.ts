// The seam between the fault scheduler and the runner: what a fault can act on (FaultTarget) and
// what the scheduler reports while it runs (FaultEvent); what it records per fault is the contract's
// FaultRecord.
import type { Cgroup } from '../cgroup/index.js';
import type { KubeletFaultControls } from '../sandbox/index.js';
import type { FaultAction, FaultOf } from './schema.js';

export interface StartedFault {
  /** What was done, for the fault-start event. */
  detail: string;
  /** Ends the fault and undoes it; resolves with the fault-end event's detail. Absent for instantaneous actions. */
  end?(): Promise<string>;
}

/** What every fault action implements: start it now against the target (see action.ts). */
export type FaultStarter<A extends FaultAction> = (fault: FaultOf<A>, target: FaultTarget) => Promise<StartedFault>;

/** Starters a target supplies for some actions, replacing the built-in ones (which act on a local pid or cgroup). */
export type FaultStarters = { [A in FaultAction]?: FaultStarter<A> };

/** Something a windowed runner hook started; the scheduler stops it at the window's end or on stop. */
export interface FaultHandle {
  /** What was started, for the fault-start event (e.g. "12 workers in 1 new pod"); absent: the action's own words. */
  detail?: string;
  /** Ends it; may resolve with what was done, for the fault-end event. */
  stop(): Promise<string | void>;
}

/** One variant's agent and node, as the runner exposes them to faults. Optional parts are checked by faultProblems. */
export interface FaultTarget {
  /** The agent's Workload API socket (slow clients connect here). */
  readonly socket: string;
  /** The agent's pid now; null while it is down (between an exit and its restart) or unknown. */
  agentPid(): number | null;
  /**
   * The agent's cgroup (memory, plus cpu and freezer where created), null for an external agent
   * without one or a machine without cgroups. Restarts happen inside the same cgroup.
   */
  readonly agentCgroup: Cgroup | null;
  /** The kubelet emulator's fault switches; null when the kubelet is real (kind). */
  readonly kubelet: KubeletFaultControls | null;
  /**
   * Resolves once the agent answers a real Workload API call again (see waitAgentAnswers in
   * probe.ts); must give up when the signal aborts. Restarts after a kill are the supervisor's job.
   */
  waitAgentAnswers(signal: AbortSignal): Promise<void>;
  /**
   * Sends the signal to the agent on the supervisor's behalf, so that it records the death as a
   * fault's kill and not as an OOM kill (an unexplained SIGKILL in a memory cgroup looks like one),
   * then restarts it with its back-off. Without it the scheduler signals agentPid() itself.
   */
  killAgent?(signal: 'SIGKILL' | 'SIGTERM'): void;
  /** Replaces `count` storm pods at once by new ones (new UIDs, not yet listed by the kubelet). */
  churnPods?(count: number): Promise<void>;
  /**
   * Starts `workers` extra storm workers (the local platform: a wave of new storm pods), resolving once
   * they are started, not once they call (start-up must not stretch the window); the scheduler
   * stops them at the window's end.
   */
  startBurst?(workers: number): Promise<FaultHandle>;
  /**
   * Actions this target carries out its own way (a cluster: through the API server — delete the
   * agent pod, resize its container); the scheduler uses these instead of the built-in starters.
   */
  readonly actions?: FaultStarters;
}

/** A fault's start or end, for samples.ndjson (`t` in ms since the load start). */
export interface FaultEvent {
  type: 'fault-start' | 'fault-end';
  /** Index in the scenario's `faults` list. */
  index: number;
  action: FaultAction;
  /** ms since the load start: for fault-start the moment the action began, for fault-end when it was over. */
  t: number;
  /** What was done, e.g. "froze the agent's cgroup (v1 freezer)" or "not applied: the agent is down". */
  detail: string;
}

/** Bystanders' counts for one second, fed by the runner: `t` is the end of the second, ms since the load start. */
export interface BystanderSecond {
  t: number;
  calls: number;
  ok: number;
}
