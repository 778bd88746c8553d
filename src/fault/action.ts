// What every fault action implements: start it now, and (for windowed actions) a function that ends
// it and restores what it changed. One file per family registers its actions in actions.ts.
import type { FaultAction, FaultOf } from './schema.js';
import type { FaultTarget } from './target.js';

export interface StartedFault {
  /** What was done, for the fault-start event. */
  detail: string;
  /** Ends the fault and undoes it; resolves with the fault-end event's detail. Absent for instantaneous actions. */
  end?(): Promise<string>;
}

export type FaultStarter<A extends FaultAction> = (fault: FaultOf<A>, target: FaultTarget) => Promise<StartedFault>;

/** A fault that could not be applied to the target as it was at that moment (e.g. the agent was down). */
export class FaultNotApplied extends Error {}
