// Real cgroups for the harness: where they may be created, and one class to drive each.
export { detectCgroupHost, parseSelfCgroup, planCgroupSetup, runCgroupParents, unifiedMount } from './host.js';
export type { CgroupHost, CgroupSetup, CgroupVersion, DetectOptions } from './host.js';
export { DELEGATED_SCOPE_ENV, planDelegation, RUNNER_LEAF } from './delegation.js';
export type { Delegation, DelegationKind, DelegationPlan, DelegationView } from './delegation.js';
export { Cgroup } from './cgroup.js';
export { CgroupReadError, limitHitsV1, parseFlatKeyed, readKeyed, readMemoryPressure } from './cgroup-read.js';
export type { MemoryReading } from './cgroup-read.js';
export { inactiveFileBytes, memoryStatParts, statRssBytes, workingSetBytes } from './memory-stat.js';
export type { MemoryStatParts } from './memory-stat.js';
export { removeIfEmpty, removeTree } from './cgroup-remove.js';
export { spawnInCgroup, procsFiles } from './spawn.js';
export { cpusAllowed, createCpuset, effectiveCpus, formatCpuList, moveToCpuset, ownPinnedCpus, parseCpuList } from './cpuset.js';
export { applyCpuBudget, checkCpuBudget, cpuQuotaCores, throttledSeconds, CPU_PERIOD_US } from './cpu-budget.js';
export type { CpuBudget, CpuBudgetOptions } from './cpu-budget.js';
