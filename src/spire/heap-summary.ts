// A repetition's SPIRE heap profiles, summed by owner: the one with the largest live heap (what
// the agent held at its fullest) and the last one taken (where it ended), for results.json.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SpireHeapProfileSummary, SpireHeapRecord } from '../contract/index.js';
import { heapByOwner } from './heap-owners.js';
import { heapProfileTime } from './heap-profile.js';

/** One profile file summed; throws a ConfigError naming the file when it is no heap profile. */
export function summarizeHeapProfile(path: string, file: string, atMs: number): SpireHeapProfileSummary {
  return { file, atMs, ...heapByOwner(readFileSync(path), path) };
}

/**
 * The heap profiles in a repetition's folder (spire-heap-<t>ms.pb.gz), or null when it has none.
 * A profile that cannot be read is listed under `unreadable`, not fatal: the others still tell
 * (none readable: null, as with none).
 */
export function summarizeRepetitionHeap(dir: string, rep: number): SpireHeapRecord | null {
  const files = readdirSync(dir)
    .flatMap((f) => {
      const t = heapProfileTime(f);
      return t === null ? [] : [{ f, t }];
    })
    .sort((a, b) => a.t - b.t);
  const read: SpireHeapProfileSummary[] = [];
  const unreadable: string[] = [];
  for (const { f, t } of files) {
    try {
      read.push(summarizeHeapProfile(join(dir, f), f, t));
    } catch (err) {
      unreadable.push(`${f}: ${(err as Error).message}`);
    }
  }
  if (!read.length) return null;
  const largest = read.reduce((a, b) => (b.totalBytes > a.totalBytes ? b : a));
  return { rep, profiles: read.length, largest, last: read[read.length - 1]!, ...(unreadable.length ? { unreadable } : {}) };
}
