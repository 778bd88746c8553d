// The sampler family: each sampler takes one reading of one source (a cgroup, a PID, a metrics
// endpoint) and returns a SampleLine; a registry creates them by name so a new source is one file,
// on this machine or in a cluster.
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

export interface SamplerOptions {
  intervalMs?: number;
}

/**
 * Every registered sampler by name: what it reads (its target) and what it gives (a Sampler, or one
 * with figures of its own beside its lines). The module that registers a sampler adds its entry here
 * by declaration merging, so createSampler is typed by name for every platform's samplers.
 */
export interface SamplerKinds {
  'cgroup-memory': { target: SamplerTarget; sampler: Sampler };
  'process-memory': { target: SamplerTarget; sampler: Sampler };
  'agent-metrics': { target: SamplerTarget; sampler: Sampler };
}

export type SamplerName = keyof SamplerKinds;

export type SamplerFactory<K extends SamplerName = SamplerName> = (target: SamplerKinds[K]['target'], opts?: SamplerOptions) => SamplerKinds[K]['sampler'];

/** What the map holds: any factory (its target is checked by name at createSampler). */
type StoredFactory = (target: never, opts?: SamplerOptions) => Sampler;

const registry = new Map<SamplerName, StoredFactory>();

export function registerSampler<K extends SamplerName>(name: K, factory: SamplerFactory<K>): void {
  registry.set(name, factory);
}

export function samplerNames(): string[] {
  return [...registry.keys()];
}

/** The sampler registered as `name`; a name whose module was never imported is an error naming the known ones. */
export function createSampler<K extends SamplerName>(name: K, target: SamplerKinds[K]['target'], opts?: SamplerOptions): SamplerKinds[K]['sampler'] {
  // The entry under `name` was registered with SamplerFactory<K> (registerSampler's signature).
  const factory = registry.get(name) as SamplerFactory<K> | undefined;
  if (!factory) throw new Error(`unknown sampler "${name}"; known: ${samplerNames().join(', ')}`);
  return factory(target, opts);
}
