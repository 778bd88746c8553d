// What the machine was: recorded with every run so numbers are never read without their context.
import { cpus, hostname, totalmem } from 'node:os';
import type { RunEnvironment } from '../contract/index.js';

export function describeEnvironment(
  p: Pick<RunEnvironment, 'cgroupVersion' | 'oomFidelity' | 'podFidelity' | 'cpuShare' | 'cgroupDelegation'>,
): RunEnvironment {
  return {
    ...p,
    nodeVersion: process.version,
    platform: `${process.platform}-${process.arch}`,
    cpus: cpus().length,
    memoryBytes: totalmem(),
    hostname: hostname(),
  };
}
