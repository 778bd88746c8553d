// Memory pressure short of a kill, from one repetition's memory samples over its storm: the time
// the working set stood near the limit in force, how often a charge met the limit, and (cgroup v2)
// how long the agent's tasks stalled on memory. "Survived" alone hides an agent held at its limit
// for most of a run; these say so.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MemoryPressureRecord, MemorySample, VariantResult } from '../contract/index.js';

/** A reading at or above this share of the limit is "near the limit". */
export const NEAR_LIMIT_SHARE = 0.95;
/** A repetition at its limit: this share of the storm near the limit ... */
export const AT_LIMIT_TIME_SHARE = 0.2;
/** ... or this share of it with every task stalled on memory (PSI full). */
export const AT_LIMIT_STALL_FULL = 0.1;
/** A gap between readings longer than this (a stalled sampler) counts only this long. */
const MAX_READING_GAP_MS = 1000;

const round = (n: number, d = 3) => Math.round(n * 10 ** d) / 10 ** d;

/** The figures over [fromMs, toMs] of the repetition's timeline; null without a reading of a limit in it. */
export function memoryPressure(samples: readonly MemorySample[], fromMs: number, toMs: number, rep: number): MemoryPressureRecord | null {
  const inStorm = samples.filter((s) => s.t >= fromMs && s.t <= toMs && s.limitBytes > 0).sort((a, b) => a.t - b.t);
  if (inStorm.length === 0 || toMs <= fromMs) return null;
  let near = 0;
  let stretch = 0;
  let longest = 0;
  inStorm.forEach((s, i) => {
    const until = i + 1 < inStorm.length ? inStorm[i + 1]!.t : toMs;
    const ms = Math.min(Math.max(0, until - s.t), MAX_READING_GAP_MS);
    if ((s.workingSetBytes ?? s.usageBytes) >= NEAR_LIMIT_SHARE * s.limitBytes) {
      near += ms;
      stretch += ms;
      longest = Math.max(longest, stretch);
    } else stretch = 0;
  });
  const first = inStorm[0]!;
  const last = inStorm[inStorm.length - 1]!;
  const delta = (k: 'limitHits' | 'stallSomeUs' | 'stallFullUs') => {
    const a = first[k];
    const b = last[k];
    return typeof a === 'number' && typeof b === 'number' ? Math.max(0, b - a) : null;
  };
  const windowUs = (last.t - first.t) * 1000;
  const stall = (k: 'stallSomeUs' | 'stallFullUs') => {
    const d = delta(k);
    return d === null || windowUs <= 0 ? null : round(Math.min(1, d / windowUs));
  };
  return {
    rep,
    stormSeconds: round((toMs - fromMs) / 1000, 1),
    nearLimitSeconds: round(near / 1000, 1),
    longestNearLimitSeconds: round(longest / 1000, 1),
    limitHits: delta('limitHits'),
    stallSome: stall('stallSomeUs'),
    stallFull: stall('stallFullUs'),
  };
}

const pct = (x: number) => `${Math.round(100 * x)}%`;

/** The repetition that spent the most seconds near its limit; null without any. */
export function worstPressure(reps: readonly MemoryPressureRecord[] | undefined): MemoryPressureRecord | null {
  return reps?.length ? reps.reduce((a, b) => (b.nearLimitSeconds > a.nearLimitSeconds ? b : a)) : null;
}

/** Whether a repetition spent a meaningful share of its storm at its limit. */
export function heldAtLimit(p: MemoryPressureRecord): boolean {
  return (p.stormSeconds > 0 && p.nearLimitSeconds / p.stormSeconds >= AT_LIMIT_TIME_SHARE) || (p.stallFull ?? 0) >= AT_LIMIT_STALL_FULL;
}

/** "12.5 s at >= 95% (longest 9.0 s), 340 limit hits, stalled 14% (all tasks 6%)" */
export function pressureWords(p: MemoryPressureRecord): string {
  const parts = [`${p.nearLimitSeconds.toFixed(1)} s of ${p.stormSeconds.toFixed(0)} s at >= 95% (longest ${p.longestNearLimitSeconds.toFixed(1)} s)`];
  if (p.limitHits !== null) parts.push(`${p.limitHits} limit hit${p.limitHits === 1 ? '' : 's'}`);
  if (p.stallSome !== null) parts.push(`stalled ${pct(p.stallSome)} (all tasks ${pct(p.stallFull ?? 0)})`);
  return parts.join(', ');
}

/** The words for a variant that survived at its limit: its worst repetition's figures; undefined when it did not. */
export function atLimitWords(v: Pick<VariantResult, 'oomKills' | 'memoryPressure' | 'runDirs'>): string | undefined {
  if (v.oomKills > 0 || !v.memoryPressure?.length) return undefined;
  const held = v.memoryPressure.filter(heldAtLimit);
  if (!held.length) return undefined;
  const worst = worstPressure(held)!;
  const of = v.runDirs.length > 1 ? ` in ${held.length} of ${v.runDirs.length} repetitions; r${worst.rep}:` : '';
  return `${of} ${pressureWords(worst)}`.trim();
}

/** The figures of one repetition folder's samples.ndjson over its storm; null without memory readings. */
export function repetitionPressure(repDir: string, rep: number, callsAtMs: number, loadSeconds: number): MemoryPressureRecord | null {
  const file = join(repDir, 'samples.ndjson');
  if (!existsSync(file) || loadSeconds <= 0) return null;
  const memory: MemorySample[] = [];
  for (const raw of readFileSync(file, 'utf8').split('\n')) {
    if (!raw.startsWith('{"kind":"memory"')) continue;
    try {
      memory.push(JSON.parse(raw) as MemorySample);
    } catch {
      // A torn last line of a killed run.
    }
  }
  return memoryPressure(memory, callsAtMs, callsAtMs + loadSeconds * 1000, rep);
}
