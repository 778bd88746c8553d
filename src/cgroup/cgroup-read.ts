// Reading a cgroup's files: numbers, "key value" tables, and the memory reading of either version,
// where a file every memory cgroup has is never read as 0 when it cannot be read at all.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AttestormError } from '../errors.js';
import type { CgroupVersion } from './host.js';
import { inactiveFileBytes, memoryStatParts, statRssBytes, workingSetBytes, type MemoryStatParts } from './memory-stat.js';

/** kernelBytes, activeFileBytes, shmemBytes: what the working set holds beside RSS (see memoryStatParts). */
export interface MemoryReading extends MemoryStatParts {
  /** Current charge (v1 memory.usage_in_bytes, v2 memory.current). */
  usageBytes: number;
  /** Kernel high-water mark (v1 memory.max_usage_in_bytes, v2 memory.peak), null where absent. */
  peakBytes: number | null;
  /** Limit in force; null when unlimited. */
  limitBytes: number | null;
  /** Kernel OOM kills in this cgroup (v1 memory.oom_control oom_kill, v2 memory.events oom_kill). */
  oomKills: number;
  /** RSS charged to the cgroup (v1 memory.stat total_rss, v2 memory.stat anon). */
  rssBytes: number | null;
  /** usage − inactive file pages (v1 memory.stat total_inactive_file, v2 inactive_file), as kubectl top counts it; null without memory.stat. */
  workingSetBytes: number | null;
  /**
   * Times a charge met the limit since the cgroup was made: v1 memory.failcnt (null where memory+swap is limited too: the kernel counts nothing then), v2 memory.events
   * `max` (allocations that hit memory.max and had to reclaim); null where the file is absent.
   */
  limitHits: number | null;
  /** v2 memory.pressure: microseconds some / all of the cgroup's tasks stalled on memory since it was made; null on v1 or without PSI. */
  stallMicros: { some: number; full: number } | null;
}

/**
 * v1's hits of the limit: memory.failcnt — but only where memory+swap is not limited too. With
 * memory.memsw.limit_in_bytes set (the runner sets it to the memory limit where swap is accounted,
 * so that the agent cannot swap instead of being OOM-killed) the kernel counts neither failcnt,
 * measured here: a cgroup writing 4× its limit through the page cache ends with both at 0. Then the
 * hits are not known, never 0.
 */
export function limitHitsV1(failcnt: number | null, memswLimit: number | null): number | null {
  return memswLimit !== null && memswLimit < UNLIMITED_V1 ? null : failcnt;
}

/** memory.pressure's "some … total=N" and "full … total=N" lines; null when absent or unreadable. */
export function readMemoryPressure(file: string): { some: number; full: number } | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  const total = (kind: string) => {
    const m = new RegExp(`^${kind} .*\\btotal=(\\d+)`, 'm').exec(text);
    return m ? Number(m[1]) : null;
  };
  const some = total('some');
  const full = total('full');
  return some === null || full === null ? null : { some, full };
}

const UNLIMITED_V1 = 2 ** 62;

/**
 * A memory file of a cgroup could not be read (missing, a permission or path problem). Never turned
 * into a reading of 0: a usage or OOM counter of 0 from a wrong path would pass maxPeakMemory or
 * oomKilled: false. Samplers let it propagate so the sampler loop counts it.
 */
export class CgroupReadError extends AttestormError {
  readonly file: string;
  constructor(file: string, cause: unknown) {
    super('ATTESTORM_ERR_IO', `cannot read ${file}: ${(cause as NodeJS.ErrnoException).code ?? (cause as Error).message}`, { cause });
    this.file = file;
  }
}

/** A file that must be there: its text, or a CgroupReadError naming it. */
function readRequired(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new CgroupReadError(file, err);
  }
}

/** A number from a file that must be there; null only for "max" (unlimited). */
function readRequiredNum(file: string): number | null {
  const text = readRequired(file).trim();
  if (text === 'max') return null;
  const n = Number(text);
  if (!Number.isFinite(n) || text === '') throw new CgroupReadError(file, new Error(`not a number: ${JSON.stringify(text.slice(0, 40))}`));
  return n;
}

/** A byte count that is never "max" (usage). */
function readCount(file: string): number {
  const n = readRequiredNum(file);
  if (n === null) throw new CgroupReadError(file, new Error('"max" where a byte count belongs'));
  return n;
}

/** A file some kernels lack (v2 memory.peak): null when absent, an error when present but unreadable. */
function readOptionalNum(file: string): number | null {
  if (!existsSync(file)) return null;
  return readRequiredNum(file);
}

/** A number from a file, or null for "max", an unreadable file or anything else. */
export function readNum(file: string): number | null {
  try {
    const text = readFileSync(file, 'utf8').trim();
    if (text === 'max') return null;
    const n = Number(text);
    return Number.isFinite(n) ? n : null;
  } catch {
    return null;
  }
}

/** "key value" lines (memory.stat, memory.events, memory.oom_control) as a map. */
export function parseFlatKeyed(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const [k, v] = line.trim().split(/\s+/);
    if (k && v !== undefined && /^\d+$/.test(v)) out.set(k, Number(v));
  }
  return out;
}

/** A "key value" file as a map; empty when it cannot be read. */
export function readKeyed(file: string): Map<string, number> {
  try {
    return parseFlatKeyed(readFileSync(file, 'utf8'));
  } catch {
    return new Map();
  }
}

/** The memory reading of the cgroup at dir (see Cgroup.readMemory). */
export function readMemoryFiles(version: CgroupVersion, dir: string): MemoryReading {
  const file = (name: string) => join(dir, name);
  if (version === 'v1') {
    const usageBytes = readCount(file('memory.usage_in_bytes'));
    const limit = readRequiredNum(file('memory.limit_in_bytes'));
    // Kernels before 4.13 have no oom_kill line: the file is there, the counter is not, so 0.
    const oomKills = parseFlatKeyed(readRequired(file('memory.oom_control'))).get('oom_kill') ?? 0;
    const stat = readKeyed(file('memory.stat'));
    return {
      usageBytes,
      peakBytes: readOptionalNum(file('memory.max_usage_in_bytes')),
      limitBytes: limit === null || limit >= UNLIMITED_V1 ? null : limit,
      oomKills,
      rssBytes: statRssBytes('v1', stat),
      workingSetBytes: workingSetBytes(usageBytes, inactiveFileBytes('v1', stat)),
      limitHits: limitHitsV1(readNum(file('memory.failcnt')), readNum(file('memory.memsw.limit_in_bytes'))),
      stallMicros: null,
      // Absent without kernel-memory accounting: then not available, like the other parts.
      ...memoryStatParts('v1', stat, readNum(file('memory.kmem.usage_in_bytes'))),
    };
  }
  const usageBytes = readCount(file('memory.current'));
  const limitBytes = readRequiredNum(file('memory.max'));
  const events = parseFlatKeyed(readRequired(file('memory.events')));
  const oomKills = events.get('oom_kill') ?? 0;
  const stat = readKeyed(file('memory.stat'));
  return {
    usageBytes,
    peakBytes: readOptionalNum(file('memory.peak')),
    limitBytes,
    oomKills,
    rssBytes: statRssBytes('v2', stat),
    workingSetBytes: workingSetBytes(usageBytes, inactiveFileBytes('v2', stat)),
    limitHits: events.get('max') ?? null,
    stallMicros: readMemoryPressure(file('memory.pressure')),
    ...memoryStatParts('v2', stat),
  };
}
