// The data contract's bystander fields now live in src/contract; re-exported for src/load's users.
export type { BystanderSecond, BystanderSummary } from '../contract/index.js';
