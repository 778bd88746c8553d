// The action registry: one starter per action name. A new action is one new function and one line here.
import type { FaultStarter } from './action.js';
import { agentKill, agentPause, cpuThrottle, memorySqueeze } from './fault-agent.js';
import { slowClients } from './fault-clients.js';
import { kubeletDown, kubeletErrors, kubeletLatency, kubeletStall } from './fault-kubelet.js';
import { burst, podChurn } from './fault-load.js';
import type { FaultAction } from './schema.js';

export const FAULT_STARTERS: { [A in FaultAction]: FaultStarter<A> } = {
  'agent-kill': agentKill,
  'agent-pause': agentPause,
  'memory-squeeze': memorySqueeze,
  'cpu-throttle': cpuThrottle,
  'kubelet-latency': kubeletLatency,
  'kubelet-errors': kubeletErrors,
  'kubelet-down': kubeletDown,
  'kubelet-stall': kubeletStall,
  'pod-churn': podChurn,
  'slow-clients': slowClients,
  burst,
};
