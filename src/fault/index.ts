// Faults (the chaos half of a scenario): the `faults` schema, what each target can take, and the
// scheduler that applies them to a running agent and its node and measures recovery.
export { FAULT_ACTIONS, INSTANT_ACTIONS, faultSchema, faultsSchema, parseFaults } from './schema.js';
export type { Fault, FaultAction, FaultInput, FaultOf } from './schema.js';
export { builtinCapabilities, burstProblems, externalCapabilities, faultProblems, faultScheduleProblems } from './problems.js';
export type { FaultCapabilities } from './problems.js';
export { FaultScheduler } from './faults.js';
export type { FaultSchedulerOptions } from './faults.js';
export type { BystanderSecond, FaultEvent, FaultHandle, FaultStarters, FaultTarget } from './fault-target.js';
export { FaultNotApplied } from './action.js';
export type { FaultStarter, StartedFault } from './action.js';
export { probeAgentOnce, waitAgentAnswers } from './probe.js';
export type { ProbeOptions } from './probe.js';
export { openSlowClients } from './fault-clients.js';
export type { SlowClientCounts, SlowClients } from './fault-clients.js';
export { squeezeMemory } from './fault-agent.js';
