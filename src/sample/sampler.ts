// The sampler family: each sampler takes one reading of one source (a cgroup, a PID, a metrics
// endpoint) and returns a SampleLine; a registry creates them by name so a new source is one file.
import type { Cgroup } from '../cgroup/index.js';
import type { SampleLine } from '../contract/index.js';

/** What a sampler may look at. Getters, because the agent's PID and metrics URL change on restart. */
export interface SamplerTarget {
  /** The agent's memory cgroup, when it runs in one. */
  cgroup?: Cgroup | null;
  /** The agent's current PID (null while it is down). */
  pid?: () => number | null;
  /** The agent's current metrics URL (null while down or when it has none). */
  metricsUrl?: () => string | null;
  /** The memory limit to report when the source has none of its own (emulated mode). */
  limitBytes?: number;
  /** A v1 cpuacct directory for whole-cgroup CPU seconds; without it /proc/<pid>/stat is used. */
  cpuacctDir?: string | null;
  procRoot?: string;
}

export interface Sampler {
  readonly name: string;
  /** How often the runner should call sample(). */
  readonly intervalMs: number;
  /** One reading at time t (ms on the placement's timeline); null when the source is unavailable right now. */
  sample(t: number): Promise<SampleLine | null> | SampleLine | null;
}

export type SamplerFactory = (target: SamplerTarget, opts?: { intervalMs?: number }) => Sampler;

const registry = new Map<string, SamplerFactory>();

export function registerSampler(name: string, factory: SamplerFactory): void {
  registry.set(name, factory);
}

export function samplerNames(): string[] {
  return [...registry.keys()];
}

export function createSampler(name: string, target: SamplerTarget, opts?: { intervalMs?: number }): Sampler {
  const factory = registry.get(name);
  if (!factory) throw new Error(`unknown sampler "${name}"; known: ${samplerNames().join(', ')}`);
  return factory(target, opts);
}
