// SPIRE agent goroutine profiles on the run's timeline: /debug/pprof/goroutine?debug=1 (every
// distinct stack with how many goroutines stand on it) saved gzipped into the repetition's folder
// every few seconds, beside the heap profiles, so where attestations wait can be counted.
import { gzipSync } from 'node:zlib';
import type { Sampler } from '../sample/index.js';
import { pprofSampler, type ProfileSamplerOptions } from './pprof-sampler.js';

/** The file name of a goroutine profile taken at t ms on the repetition's timeline. */
export function goroutineProfileFile(t: number): string {
  return `spire-goroutines-${Math.round(t)}ms.txt.gz`;
}

/** The time (ms on the repetition's timeline) in a goroutine profile's file name; null for any other name. */
export function goroutineProfileTime(name: string): number | null {
  const m = /^spire-goroutines-(-?\d+)ms\.txt\.gz$/.exec(name);
  return m ? Number(m[1]) : null;
}

/** Each sample saves the text profile gzipped and records a note naming the file. */
export function spireGoroutineProfileSampler(opts: ProfileSamplerOptions): Sampler {
  return pprofSampler(
    {
      name: 'spire-goroutine-profile',
      path: '/debug/pprof/goroutine?debug=1',
      what: 'goroutine profile',
      file: goroutineProfileFile,
      encode: (b) => gzipSync(b),
    },
    opts,
  );
}
