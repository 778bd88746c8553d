// Capacity sweeps: one scenario key varied over values (or bisected), every variant at each value.
export { runSweep, validateSweep } from './sweep.js';
export type { SweepOptions } from './sweep.js';
export { parseVary, numericValue, scenarioWith } from './vary.js';
export type { Vary } from './vary.js';
export { boundaries, pointsOf, sweepOrder, SWEEP_SCHEMA_VERSION } from './sweep-result.js';
export type { SweepPoint, SweepResult } from './sweep-result.js';
export { renderSweepHtml, writeSweepReport } from './sweep-report.js';
