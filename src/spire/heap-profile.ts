// SPIRE agent heap profiles on the run's timeline: the agent's own pprof endpoint (profiling_port,
// loopback only) read every few seconds into the repetition's folder, so what holds the agent's
// memory under a storm can be read afterwards with `go tool pprof`, not guessed.
import type { Sampler } from '../sample/index.js';
import { pprofSampler, type ProfileSamplerOptions } from './pprof-sampler.js';

export type HeapProfileSamplerOptions = ProfileSamplerOptions;

/** The file name of a profile taken at t ms on the repetition's timeline. */
export function heapProfileFile(t: number): string {
  return `spire-heap-${Math.round(t)}ms.pb.gz`;
}

/** The time (ms on the repetition's timeline) in a profile's file name; null for any other name. */
export function heapProfileTime(name: string): number | null {
  const m = /^spire-heap-(-?\d+)ms\.pb\.gz$/.exec(name);
  return m ? Number(m[1]) : null;
}

/** Each sample saves /debug/pprof/heap (gzipped protobuf, as `go tool pprof` reads it) and records a note naming the file. */
export function spireHeapProfileSampler(opts: HeapProfileSamplerOptions): Sampler {
  return pprofSampler({ name: 'spire-heap-profile', path: '/debug/pprof/heap', what: 'heap profile', file: heapProfileFile }, opts);
}
