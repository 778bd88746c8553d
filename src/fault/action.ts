// What every fault action implements: start it now, and (for windowed actions) a function that ends
// it and restores what it changed. One file per family registers its actions in actions.ts.
// The starter types are declared beside FaultTarget (target.ts), which refers to them.
export type { FaultStarter, StartedFault } from './fault-target.js';

/** A fault that could not be applied to the target as it was at that moment (e.g. the agent was down). */
export class FaultNotApplied extends Error {}
