// The local platform: every repetition in a sandbox on this machine.
export { localPlatform, localFaultProblems, validateFaults } from './local-platform.js';
export { runLocalRepetition } from './local-repetition.js';
export type { LocalRepetitionContext } from './local-repetition.js';
