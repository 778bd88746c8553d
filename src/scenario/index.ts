// Scenarios, the runner and the run folder's data contract.
export * from './results.js';
