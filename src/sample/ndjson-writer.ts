// One appender per samples.ndjson: every sampler writes through it, a line at a time, so a run that
// is interrupted (or an agent that takes the machine down) leaves every sample taken so far on disk.
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { SampleLine } from '../contract/index.js';

export class NdjsonWriter {
  readonly path: string;
  #closed = false;
  #lines = 0;

  constructor(path: string) {
    this.path = path;
    mkdirSync(dirname(path), { recursive: true });
    // Start empty (a re-run into the same folder must not mix runs), and exist from the start so
    // readers see a data file even for a run that dies at once.
    writeFileSync(path, '');
  }

  get lines(): number {
    return this.#lines;
  }

  /**
   * Appends one line synchronously. Samples are small and at most ~15 a second, so a sync append
   * costs little and guarantees ordering and durability without a queue.
   */
  write(line: SampleLine): void {
    if (this.#closed) return;
    appendFileSync(this.path, `${JSON.stringify(line)}\n`);
    this.#lines++;
  }

  close(): void {
    this.#closed = true;
  }
}

/** Reads a samples.ndjson back; a torn last line (the process died mid-write) is ignored. */
export function parseNdjson(text: string): SampleLine[] {
  const out: SampleLine[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line) as SampleLine);
    } catch {
      // A partial line at the end of a file written by a killed process.
    }
  }
  return out;
}
