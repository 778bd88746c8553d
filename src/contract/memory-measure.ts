// Which figure of the agent's memory the peaks, ratios, expectations, sweeps and baselines use.
// The working set (cgroup usage minus inactive file pages) by default: what kubectl top, the
// kubelet's eviction and container_memory_working_set_bytes count. Usage also holds page cache
// the kernel reclaims before it kills anything, so an agent can touch its limit in usage and live;
// the kernel's OOM kill, not any of these figures, is the verdict on survival.
import type { MemorySample } from './sample-lines.js';
import { workingSetPartsOf, type WorkingSetParts } from './working-set-parts.js';

export const MEMORY_MEASURES = ['working-set', 'usage', 'rss'] as const;
export type MemoryMeasure = (typeof MEMORY_MEASURES)[number];
export const DEFAULT_MEMORY_MEASURE: MemoryMeasure = 'working-set';

/** The measure in words, for headings ("peak working set (MiB)"). */
export const MEASURE_WORDS: Record<MemoryMeasure, string> = { 'working-set': 'working set', usage: 'usage', rss: 'RSS' };

/** What each measure is, in one sentence, for the reports. */
export const MEASURE_EXPLAINED: Record<MemoryMeasure, string> = {
  'working-set':
    "working set = cgroup usage − inactive file pages, as kubectl top and the kubelet's eviction count it (page cache the kernel reclaims before an OOM kill is left out)",
  usage: "usage = the cgroup's whole charge (memory.usage_in_bytes / memory.current), page cache included; its peak is the kernel's high-water mark",
  rss: "RSS = the agent's anonymous memory (memory.stat total_rss / anon; VmRSS without a cgroup)",
};

/** The peak of each measure over a repetition (or the median over repetitions); null: not measured. */
export interface MemoryPeaks {
  workingSetBytes: number | null;
  usageBytes: number | null;
  rssBytes: number | null;
  /** What the working set held at its highest reading; absent when the samples carried no parts. */
  workingSetParts?: WorkingSetParts;
}

export const NO_PEAKS: Readonly<MemoryPeaks> = { workingSetBytes: null, usageBytes: null, rssBytes: null };

const PEAK_KEY = { 'working-set': 'workingSetBytes', usage: 'usageBytes', rss: 'rssBytes' } as const satisfies Record<MemoryMeasure, keyof MemoryPeaks>;

/** The peak in `measure`. */
export function peakIn(peaks: MemoryPeaks, measure: MemoryMeasure): number | null {
  return peaks[PEAK_KEY[measure]];
}

/** One sample's figure in `measure`; null where the sample has none (an older folder, a cluster sampler without RSS). */
export function sampleIn(s: MemorySample, measure: MemoryMeasure): number | null {
  if (measure === 'usage') return s.usageBytes;
  if (measure === 'rss') return s.rssBytes;
  return s.workingSetBytes ?? null;
}

/**
 * A repetition's peaks from its memory samples: usage from the high-water mark the samples carry
 * (the kernel's, which sees between samples), the working set and RSS from the highest readings
 * (the kernel keeps no high-water mark of them; samples are 100 ms apart), and what the working set
 * held at its highest reading.
 */
export class PeakTracker {
  #peaks: MemoryPeaks = { ...NO_PEAKS };

  add(s: MemorySample): void {
    const p = this.#peaks;
    p.usageBytes = Math.max(p.usageBytes ?? 0, s.peakBytes, s.usageBytes);
    if (s.workingSetBytes != null && s.workingSetBytes > (p.workingSetBytes ?? -1)) {
      p.workingSetBytes = s.workingSetBytes;
      // The parts of this reading, or none: parts of a lower, earlier one would not add up to it.
      const parts = workingSetPartsOf(s);
      if (parts) p.workingSetParts = parts;
      else delete p.workingSetParts;
    }
    if (s.rssBytes !== null) p.rssBytes = Math.max(p.rssBytes ?? 0, s.rssBytes);
  }

  peaks(): MemoryPeaks {
    return { ...this.#peaks };
  }
}

/**
 * The peaks of a repetition in which the kernel OOM-killed the agent: the kernel kills only when
 * reclaim, which takes inactive file pages first, cannot bring the charge under the limit, so the
 * working set stood at the charge then, whatever the last 100 ms sample before the kill showed.
 */
export function peaksAtOomKill(p: MemoryPeaks): MemoryPeaks {
  if (p.usageBytes === null) return p;
  return { ...p, workingSetBytes: Math.max(p.workingSetBytes ?? 0, p.usageBytes) };
}

/** A name read from a file: a measure this version knows, else null. */
export function asMemoryMeasure(x: unknown): MemoryMeasure | null {
  return (MEMORY_MEASURES as readonly unknown[]).includes(x) ? (x as MemoryMeasure) : null;
}

/**
 * The measure of a run's peaks: its variants' (all share the scenario's), else the scenario's as
 * resolved, else the default. Structural, so results.ts need not be imported here.
 */
export function runMemoryMeasure(run: { scenario?: { resolved?: unknown }; variants?: ReadonlyArray<{ memoryMeasure?: unknown }> }): MemoryMeasure {
  const fromVariant = run.variants?.map((v) => asMemoryMeasure(v.memoryMeasure)).find((m) => m !== null);
  const resolved = run.scenario?.resolved;
  const fromScenario = resolved && typeof resolved === 'object' ? asMemoryMeasure((resolved as { memoryMeasure?: unknown }).memoryMeasure) : null;
  return fromVariant ?? fromScenario ?? DEFAULT_MEMORY_MEASURE;
}
