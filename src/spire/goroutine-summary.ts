// A repetition's SPIRE goroutine profiles, counted by owner: every profile's counts in time order
// (for the report's chart), the one with the most goroutines and the last one, for results.json.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { SpireGoroutineProfileSummary, SpireGoroutineRecord } from '../contract/index.js';
import { goroutinesByOwner } from './goroutine-owners.js';
import { goroutineProfileTime } from './goroutine-profile.js';

/** One profile file counted; throws a ConfigError naming the file when it is no goroutine profile. */
export function summarizeGoroutineProfile(path: string, file: string, atMs: number): SpireGoroutineProfileSummary {
  const data = readFileSync(path);
  const text = (data[0] === 0x1f && data[1] === 0x8b ? gunzipSync(data) : data).toString('utf8');
  return { file, atMs, ...goroutinesByOwner(text, path) };
}

/** The goroutine profiles in a repetition's folder, or null when it has none readable (unreadable ones listed, not fatal). */
export function summarizeRepetitionGoroutines(dir: string, rep: number): SpireGoroutineRecord | null {
  const files = readdirSync(dir)
    .flatMap((f) => {
      const t = goroutineProfileTime(f);
      return t === null ? [] : [{ f, t }];
    })
    .sort((a, b) => a.t - b.t);
  const series: SpireGoroutineProfileSummary[] = [];
  const unreadable: string[] = [];
  for (const { f, t } of files) {
    try {
      series.push(summarizeGoroutineProfile(join(dir, f), f, t));
    } catch (err) {
      unreadable.push(`${f}: ${(err as Error).message}`);
    }
  }
  if (!series.length) return null;
  const largest = series.reduce((a, b) => (b.total > a.total ? b : a));
  return { rep, profiles: series.length, largest, last: series[series.length - 1]!, series, ...(unreadable.length ? { unreadable } : {}) };
}
