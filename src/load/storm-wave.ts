// A burst fault's wave: extra storm workers started while the load runs, in new pods of the storm's
// size, and stopped at the window's end. runLoad hands a StormControl to its caller at go time.

/** The wave a StormControl.addWorkers started. */
export interface StormWave {
  /** Pods and workers the wave started. */
  pods: number;
  workers: number;
  /** The new pods' UIDs (what the agent and the kubelet see). */
  podUids: string[];
  /**
   * Ends the wave's pods, started or still starting: SIGTERM, so workers finish their call in flight
   * and ship their last second. Resolves once they are gone, with how the wave went.
   */
  stop(): Promise<StormWaveEnd>;
}

/** How a wave went, known at its end. */
export interface StormWaveEnd {
  /** Pods of the wave whose workers were calling before the end. */
  calling: number;
  /** ms from addWorkers until the last of those pods was calling; null when none was (start-up outlasted the window). */
  readyMs: number | null;
  /** Why a pod of the wave failed to start (timeouts, crashes); empty when none did. */
  failures: string[];
}

/** Grows the running storm (given to LoadEnv.onGo). */
export interface StormControl {
  /**
   * Starts `workers` extra storm workers in new pods, counted as the storm's. Resolves once the pods'
   * processes are spawned; each pod joins the calls when its workers are up.
   */
  addWorkers(workers: number): Promise<StormWave>;
}

/**
 * How a burst of `workers` extra workers is cut into pods of the storm's size: as few pods as hold
 * them at workersPerPod each, the workers spread evenly (sizes differ by one at most).
 * 50 workers at 20 per pod: [17, 17, 16].
 */
export function waveSizes(workers: number, workersPerPod: number): number[] {
  const pods = Math.ceil(workers / workersPerPod);
  return Array.from({ length: pods }, (_, i) => Math.floor(workers / pods) + (i < workers % pods ? 1 : 0));
}
