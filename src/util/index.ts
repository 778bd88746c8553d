// Small helpers shared by every subsystem: units, schema glue, child processes, the reaper, sleep, deep merge, directory listing, terminal width, mounts.
export * from './units.js';
export * from './zod.js';
export * from './child.js';
export * from './reaper.js';
export * from './bundle.js';
export * from './lru.js';
export * from './sleep.js';
export * from './deep-merge.js';
export * from './fs.js';
export * from './terminal.js';
export * from './hand-back.js';
export * from './mountinfo.js';
