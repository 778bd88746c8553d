// Reads one run folder (results.json plus every samples.ndjson) back into memory. Reports are rendered
// only from what this returns, so `attestorm report` works offline on any saved run folder.
import { existsSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from '../errors.js';
import type { MergedSource } from './report-model.js';
import { summarizeRepetitionGoroutines, summarizeRepetitionHeap } from '../spire/index.js';
import {
  isPlacementName,
  PeakTracker,
  peakIn,
  peaksAtOomKill,
  READABLE_SCHEMA_VERSIONS,
  runMemoryMeasure,
  runnerState,
  upgradeResults,
  type MemoryMeasure,
  type RunResults,
  type SampleLine,
  type VariantResult,
} from '../contract/index.js';

export interface LoadedRun {
  /** Absolute path of the run folder. */
  dir: string;
  /** Short name for tables and legends: the folder's base name. */
  label: string;
  results: RunResults;
  /** Sample lines per repetition folder name ("pre-attestation.r1"), in file order. */
  samples: Map<string, SampleLine[]>;
  /** Things tolerated while reading (truncated last line, missing sample files). */
  warnings: string[];
  /** Set when this run is several folders of one scenario merged as repetitions (merge-runs.ts). */
  mergedFrom?: MergedSource[];
  mergeNotes?: string[];
}

const SAMPLE_KINDS = new Set(['memory', 'load', 'metrics', 'event', 'kubelet-fetch', 'kubelet-fetches']);

export async function loadRun(runDir: string): Promise<LoadedRun> {
  const dir = path.resolve(runDir);
  const info = await stat(dir).catch(() => null);
  if (!info) throw new ConfigError(`run folder ${runDir} does not exist`);
  if (!info.isDirectory()) throw new ConfigError(`run folder ${runDir} is not a directory`);

  const results = await readResults(dir, runDir);
  const samples = new Map<string, SampleLine[]>();
  const warnings: string[] = [];
  if (results.status === 'incomplete' || results.status === 'interrupted') {
    const measure = runMemoryMeasure(results);
    for (const rep of unlistedRepetitions(dir, results, await readdir(dir))) {
      const file = path.join(dir, rep, 'samples.ndjson');
      const lines = parseSamples(await readFile(file, 'utf8'), file, warnings);
      results.variants.push(variantFromSamples(rep, lines, measure));
      warnings.push(`${rep} is not in results.json (its runner died mid-run): shown from its samples`);
    }
  }
  for (const variant of results.variants) {
    for (const rep of variant.runDirs) {
      const file = path.join(dir, rep, 'samples.ndjson');
      const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return null;
        throw new ConfigError(`cannot read ${file}: ${err.message}`, { cause: err });
      });
      if (text === null) {
        // A variant that failed before its load started has no samples; the table still has its row.
        warnings.push(`${rep}/samples.ndjson is missing`);
        samples.set(rep, []);
        continue;
      }
      samples.set(rep, parseSamples(text, file, warnings));
    }
    const heap = variant.spireHeap ?? fromFolders(dir, variant, summarizeRepetitionHeap);
    if (heap) variant.spireHeap = heap;
    const goroutines = variant.spireGoroutines ?? fromFolders(dir, variant, summarizeRepetitionGoroutines);
    if (goroutines) variant.spireGoroutines = goroutines;
  }
  return { dir, label: path.basename(dir), results, samples, warnings };
}

/**
 * What a SPIRE variant's repetition folders hold (heap or goroutine profiles), summed, for folders
 * written before results.json kept it (the runner adds it as each repetition ends); null: none.
 */
function fromFolders<T>(dir: string, variant: VariantResult, summarize: (repDir: string, rep: number) => T | null): T[] | undefined {
  const records = variant.runDirs.flatMap((rep, i) => {
    const repDir = path.join(dir, rep);
    const record = existsSync(repDir) ? summarize(repDir, Number(/\.r(\d+)$/.exec(rep)?.[1] ?? i + 1)) : null;
    return record ? [record] : [];
  });
  return records.length ? records : undefined;
}

async function readResults(dir: string, given: string): Promise<RunResults> {
  const file = path.join(dir, 'results.json');
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`run folder ${given} has no results.json (is it a run folder?)`, { cause: err });
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`${file} is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  const raw = data as Record<string, unknown> | null;
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new ConfigError(`${file} must hold a JSON object`);
  if (!(READABLE_SCHEMA_VERSIONS as readonly unknown[]).includes(raw.schemaVersion)) {
    throw new ConfigError(
      `${file} has schemaVersion ${JSON.stringify(raw.schemaVersion)}, this attestorm reads schemaVersion ${READABLE_SCHEMA_VERSIONS.join(', ')}`,
    );
  }
  const list = raw.schemaVersion === 1 ? raw.placements : raw.variants;
  const listName = raw.schemaVersion === 1 ? 'placements' : 'variants';
  if (!Array.isArray(list)) throw new ConfigError(`${file}: ${listName} must be an array`);
  for (const [i, p] of (list as Array<{ name?: unknown; runDirs?: unknown }>).entries()) {
    if (!p || typeof p.name !== 'string' || !Array.isArray(p.runDirs)) {
      throw new ConfigError(`${file}: ${listName}[${i}] must have a name and runDirs`);
    }
    for (const rep of p.runDirs) {
      // Sample folders are read relative to the run folder; refuse anything that would leave it.
      if (typeof rep !== 'string' || rep.includes('/') || rep.includes('\\') || rep === '..' || rep === '.') {
        throw new ConfigError(`${file}: ${listName}[${i}].runDirs holds an invalid folder name ${JSON.stringify(rep)}`);
      }
    }
  }
  const results = upgradeResults(raw);
  if (results.status === 'running' && runnerState(results) === 'gone') {
    results.status = 'incomplete';
    results.statusDetail = `the folder says running, but its runner (pid ${results.runner.pid} on ${results.runner.hostname}) is gone: it was killed or its machine stopped`;
    results.passed = false;
    if (results.verdict === 'passed') results.verdict = 'inconclusive';
  }
  return results;
}

/**
 * Repetition folders on disk that results.json does not list yet: a runner killed in the middle of
 * a variant leaves its samples but no entry. They become variants figured from their samples alone.
 */
export function unlistedRepetitions(dir: string, results: RunResults, names: string[]): string[] {
  const listed = new Set(results.variants.flatMap((v) => v.runDirs));
  return names.filter((n) => /^[a-z0-9][a-z0-9-]*\.r\d+$/.test(n) && !listed.has(n) && existsSync(path.join(dir, n, 'samples.ndjson')));
}

/** A variant result from one repetition's samples only (the runner died before writing it). */
export function variantFromSamples(repDir: string, samples: SampleLine[], measure: MemoryMeasure): VariantResult {
  const tracker = new PeakTracker();
  let limit = 0;
  let oomKills = 0;
  const counts = { ok: 0, rateLimited: 0, deadlineExceeded: 0, error: 0 };
  const seconds = new Set<number>();
  for (const s of samples) {
    if (s.kind === 'memory') {
      tracker.add(s);
      limit = Math.max(limit, s.limitBytes);
    } else if (s.kind === 'event' && s.type === 'oom-kill') oomKills++;
    else if (s.kind === 'load') {
      counts.ok += s.ok;
      counts.rateLimited += s.rateLimited;
      counts.deadlineExceeded += s.deadlineExceeded;
      counts.error += s.error;
      seconds.add(Math.floor(s.t / 1000));
    }
  }
  const secs = Math.max(1, seconds.size);
  const peaks = oomKills > 0 ? peaksAtOomKill(tracker.peaks()) : tracker.peaks();
  const name = repDir.replace(/\.r\d+$/, '');
  return {
    name,
    agent: {
      kind: 'reference',
      placement: isPlacementName(name) ? name : null,
      key: null,
    },
    runDirs: [repDir],
    memoryLimitBytes: limit,
    peakMemoryBytes: peakIn(peaks, measure),
    memoryMeasure: measure,
    peaks,
    oomKills,
    restarts: 0,
    downtimeSeconds: 0,
    okRps: counts.ok / secs,
    rejectedRps: counts.rateLimited / secs,
    errorRps: counts.error / secs,
    deadlineExceededRps: counts.deadlineExceeded / secs,
    spread: {},
    deaths: [],
    latency: {},
    peakInflightAttestations: null,
    rejectionsByKeyType: {},
    workerMemoryBytes: null,
    expectations: [],
    verdict: 'inconclusive',
    passed: false,
    error: `${repDir} was cut off when its runner died: figures come from its samples alone (peak from the memory samples, not the kernel's final reading)`,
  };
}

/**
 * One SampleLine per line. The runner appends while it runs, so an interrupted run may end with a
 * half-written line: that one is dropped with a warning. A bad line anywhere else is corruption.
 */
export function parseSamples(text: string, file: string, warnings: string[]): SampleLine[] {
  const lines = text.split('\n');
  const out: SampleLine[] = [];
  let last = lines.length - 1;
  while (last >= 0 && lines[last]!.trim() === '') last--;
  for (let i = 0; i <= last; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch (err) {
      if (i === last) {
        warnings.push(`${file}: dropped a truncated last line`);
        break;
      }
      throw new ConfigError(`${file}:${i + 1} is not a JSON sample line: ${(err as Error).message}`, { cause: err });
    }
    const kind = (parsed as { kind?: unknown } | null)?.kind;
    const t = (parsed as { t?: unknown } | null)?.t;
    if (typeof kind !== 'string' || !SAMPLE_KINDS.has(kind) || typeof t !== 'number') {
      // Newer writers may add kinds; skipping unknown ones keeps old reports renderable.
      continue;
    }
    out.push(parsed as SampleLine);
  }
  return out;
}
