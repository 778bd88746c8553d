// Small helpers shared by every subsystem: units, schema glue, process reaping.
export * from './units.js';
export * from './zod.js';
