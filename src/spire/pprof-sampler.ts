// A sampler that saves one of SPIRE's pprof endpoints (profiling_port, loopback only) into the
// repetition's folder every few seconds, on the run's timeline, and notes each file it wrote; an
// agent that does not answer (down, starved) yields no sample. The heap and goroutine profiles are two.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EventSample } from '../contract/index.js';
import type { Sampler } from '../sample/index.js';

export interface ProfileSamplerOptions {
  /** The agent's profiling port while it runs; null while it is down. */
  port: () => number | null;
  /** Where the profiles go (the repetition's folder). */
  dir: string;
  intervalMs: number;
}

export interface PprofEndpoint {
  /** The sampler's name. */
  name: string;
  /** Path and query on the pprof listener, e.g. /debug/pprof/heap. */
  path: string;
  /** What the note calls it ("heap profile"). */
  what: string;
  file(t: number): string;
  /** The bytes to save from the body as served (default: as served). */
  encode?: (body: Buffer) => Buffer;
}

export function pprofSampler(endpoint: PprofEndpoint, opts: ProfileSamplerOptions): Sampler {
  return {
    name: endpoint.name,
    intervalMs: opts.intervalMs,
    async sample(t): Promise<EventSample | null> {
      const port = opts.port();
      if (port === null) return null;
      try {
        const res = await fetch(`http://127.0.0.1:${port}${endpoint.path}`, { signal: AbortSignal.timeout(Math.max(500, opts.intervalMs - 200)) });
        if (!res.ok) return null;
        const body = Buffer.from(await res.arrayBuffer());
        const file = endpoint.file(t);
        writeFileSync(join(opts.dir, file), endpoint.encode ? endpoint.encode(body) : body);
        return { kind: 'event', type: 'note', t, detail: `spire ${endpoint.what} ${file} (${body.length} bytes)` };
      } catch {
        return null;
      }
    },
  };
}
