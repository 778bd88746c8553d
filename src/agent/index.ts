// The agent folder's public surface: start an agent, its config schema, and the parts other
// folders and benchmarks reuse (cgroup parser, limiter, key strategies, metrics names).
export { startAgent, throttledStderrLog, type RunningAgent, type StartAgentOptions } from './agent.js';
export { readyLine, STOP_GRACE_MS, untilStopped } from './until-stopped.js';
export {
  agentConfigSchema,
  parseAgentConfig,
  readAgentConfigFile,
  effectiveKeyStrategy,
  ATTESTORS,
  LIMIT_KEYS,
  type AgentConfig,
  type AgentConfigInput,
} from './config.js';
export { parseCgroup } from './cgroup-path.js';
export { createRateLimiter, coarseClock, DEFAULT_CLOCK_TICK_MS, DEFAULT_CLOCK_BUSY_READS, type RateLimiterOptions } from './limiter.js';
export { createKeyStrategy } from './limiter-key.js';
export { createPeerCredReader, type PeerCred } from './peercred.js';
export { fromStruct, toStruct } from './proto-struct.js';
export type { AgentMetrics } from './metrics.js';
export type { Attestor, CallerCreds, IdentityIssuer, KeyStrategy, LimitMethodKey, RateLimiter, RegistrationEntry, Selector } from './types.js';
