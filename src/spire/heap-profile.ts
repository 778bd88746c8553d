// SPIRE agent heap profiles on the run's timeline: the agent's own pprof endpoint (profiling_port,
// loopback only) read every few seconds into the repetition's folder, so what holds the agent's
// memory under a storm can be read afterwards with `go tool pprof`, not guessed.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EventSample } from '../contract/index.js';
import type { Sampler } from '../sample/index.js';

export interface HeapProfileSamplerOptions {
  /** The agent's profiling port while it runs; null while it is down. */
  port: () => number | null;
  /** Where the profiles go (the repetition's folder). */
  dir: string;
  intervalMs: number;
}

/** The file name of a profile taken at t ms on the repetition's timeline. */
export function heapProfileFile(t: number): string {
  return `spire-heap-${Math.round(t)}ms.pb.gz`;
}

/** The time (ms on the repetition's timeline) in a profile's file name; null for any other name. */
export function heapProfileTime(name: string): number | null {
  const m = /^spire-heap-(-?\d+)ms\.pb\.gz$/.exec(name);
  return m ? Number(m[1]) : null;
}

/**
 * Each sample saves /debug/pprof/heap (gzipped protobuf, as `go tool pprof` reads it) and records
 * a note naming the file; an agent that does not answer (down, starved) yields no sample.
 */
export function spireHeapProfileSampler(opts: HeapProfileSamplerOptions): Sampler {
  return {
    name: 'spire-heap-profile',
    intervalMs: opts.intervalMs,
    async sample(t): Promise<EventSample | null> {
      const port = opts.port();
      if (port === null) return null;
      try {
        const res = await fetch(`http://127.0.0.1:${port}/debug/pprof/heap`, { signal: AbortSignal.timeout(Math.max(500, opts.intervalMs - 200)) });
        if (!res.ok) return null;
        const body = Buffer.from(await res.arrayBuffer());
        const file = heapProfileFile(t);
        writeFileSync(join(opts.dir, file), body);
        return { kind: 'event', type: 'note', t, detail: `spire heap profile ${file} (${body.length} bytes)` };
      } catch {
        return null;
      }
    },
  };
}
