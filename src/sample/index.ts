// Samplers of the agent under test: memory (cgroup or PID), CPU and its metrics endpoint, written
// as SampleLines to one NDJSON file per placement run.
import './sampler-cgroup-memory.js';
import './sampler-process-memory.js';
import './sampler-agent-metrics.js';

export { createSampler, registerSampler, samplerNames } from './sampler.js';
export type { Sampler, SamplerFactory, SamplerKinds, SamplerName, SamplerOptions, SamplerTarget } from './sampler.js';
export { cgroupMemorySampler } from './sampler-cgroup-memory.js';
export { processMemorySampler } from './sampler-process-memory.js';
export { agentMetricsSampler, metricsSampleFrom } from './sampler-agent-metrics.js';
export { SamplerLoop } from './sampler-loop.js';
export { NdjsonWriter, parseNdjson } from './ndjson-writer.js';
export { parsePrometheusText, sumByLabel, sumMetric } from './prometheus-text.js';
export type { PromSample } from './prometheus-text.js';
export {
  CpuAccumulator,
  parseCpuacctUsage,
  parseCpuStatV2,
  parseProcStatCpuSeconds,
  parseProcStatus,
  readProcessCpuSeconds,
  readProcessMemory,
} from './procfs-memory.js';
export type { ProcessMemory } from './procfs-memory.js';
export { openExistingCgroup } from './existing-cgroup.js';
export { busyCores, loadAverage1m, parseProcStat, readMachineCpu } from './machine-cpu.js';
export type { MachineCpuReading } from './machine-cpu.js';
export { CumulativeCpuSeries, SATURATED, stormLimit } from './cpu-shares.js';
export type { CpuShares, StormLimit } from './cpu-shares.js';
