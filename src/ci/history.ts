// The trend across many runs of one scenario (nightly artifacts, say): run folders found under a
// folder, ordered by start time, each gated against the run before it as `--baseline` would have.
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../errors.js';
import { READABLE_SCHEMA_VERSIONS, RESULTS_SCHEMA_VERSION, upgradeResults, type RunResults } from '../contract/index.js';
import { compareWithBaseline, type BaselineComparison } from './baseline.js';
import { changeText } from './baseline-table.js';
import { bystandersOf } from './figures.js';
import { provenanceOf } from './provenance.js';
import { readResultsFile } from './results-file.js';
import { parseTolerances, type Tolerances } from './tolerance.js';

export interface HistoryPoint {
  /** null: unmeasured in that run. */
  peakMemoryBytes: number | null;
  memoryLimitBytes: number;
  oomKills: number;
  /** Null when that run measured no bystanders. */
  bystanderSuccess: number | null;
  agentVersion: string | null;
  ran: boolean;
}

export interface HistoryRun {
  /** The run folder, relative to the history folder. */
  dir: string;
  startedAt: string;
  status: string;
  verdict: string;
  commit: string | null;
  dirty: boolean | null;
  toolVersion: string;
  scenarioHash: string | null;
  /** Set when the folder was written in an older results schema and converted for the trend. */
  upgradedFrom: number | null;
  byVariant: Record<string, HistoryPoint>;
  /** The gate against the previous run; null for the first. */
  gate:
    { against: string; regressions: string[]; regressedVariants: string[]; improved: number; notes: string[] } | { against: string; refused: string } | null;
}

export interface HistoryModel {
  scenario: string;
  /** Absolute path of the folder read. */
  folder: string;
  tolerance: string;
  variants: string[];
  runs: HistoryRun[];
  /** Folders found but left out, with the reason. */
  skipped: string[];
}

const MAX_DEPTH = 4;

interface Loaded {
  dir: string;
  results: RunResults;
  upgradedFrom: number | null;
}

/** Every folder under `root` holding a results.json (not descending into a run folder). */
export function findRunFolders(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string, depth: number) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    if (entries.some((e) => e.isFile() && e.name === 'results.json')) {
      out.push(dir);
      return;
    }
    if (depth >= MAX_DEPTH) return;
    for (const e of entries) if (e.isDirectory() && !e.name.startsWith('.')) walk(path.join(dir, e.name), depth + 1);
  };
  walk(root, 0);
  return out.sort();
}

export interface HistoryOptions {
  /** Which scenario, when the folder holds runs of several. */
  scenario?: string;
  tolerances?: Tolerances;
  /** The --tolerance text, for the page. */
  toleranceText?: string;
}

export function loadHistory(folder: string, opts: HistoryOptions = {}): HistoryModel {
  const root = path.resolve(folder);
  let isDir: boolean;
  try {
    isDir = statSync(root).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir) throw new ConfigError(`history: ${folder} is not a folder (give the folder that holds the run folders)`);
  const skipped: string[] = [];
  const loaded: Loaded[] = [];
  for (const dir of findRunFolders(root)) {
    const rel = path.relative(root, dir) || '.';
    try {
      const { results: raw } = readResultsFile(dir, 'history:');
      // Older folders join the trend converted (as `attestorm report` reads them); they are not gated across the change.
      const upgradedFrom = raw.schemaVersion === RESULTS_SCHEMA_VERSION ? null : raw.schemaVersion;
      if (upgradedFrom !== null && !(READABLE_SCHEMA_VERSIONS as readonly number[]).includes(upgradedFrom)) {
        skipped.push(`${rel}: results schemaVersion ${upgradedFrom}, this report reads ${READABLE_SCHEMA_VERSIONS.join(', ')}`);
        continue;
      }
      const results = upgradedFrom === null ? raw : upgradeResults(raw as unknown as Record<string, unknown>);
      if (Number.isNaN(Date.parse(results.startedAt)) || !Array.isArray(results.variants)) {
        skipped.push(`${rel}: results.json has no valid startedAt or variants`);
        continue;
      }
      loaded.push({ dir: rel, results, upgradedFrom });
    } catch (err) {
      skipped.push(`${rel}: ${(err as Error).message}`);
    }
  }
  if (loaded.length === 0) {
    throw new ConfigError(`history: no readable run folder under ${folder}${skipped.length ? ` (${skipped.join('; ')})` : ''}`);
  }
  const names = [...new Set(loaded.map((l) => l.results.scenario.name))];
  let scenario = opts.scenario;
  if (scenario === undefined) {
    if (names.length > 1) {
      const counts = names.map((n) => `${n} (${loaded.filter((l) => l.results.scenario.name === n).length} runs)`);
      throw new ConfigError(`history: ${folder} holds runs of several scenarios: ${counts.join(', ')}; pick one with --scenario`);
    }
    scenario = names[0]!;
  } else if (!names.includes(scenario)) {
    throw new ConfigError(`history --scenario ${scenario}: no run of that scenario under ${folder}; found ${names.join(', ')}`);
  }
  const runs = loaded.filter((l) => l.results.scenario.name === scenario).sort((a, b) => Date.parse(a.results.startedAt) - Date.parse(b.results.startedAt));
  for (const l of loaded) if (l.results.scenario.name !== scenario) skipped.push(`${l.dir}: scenario ${l.results.scenario.name}`);

  const tolerances = opts.tolerances ?? parseTolerances(undefined);
  const variants = [...new Set(runs.flatMap((r) => r.results.variants.map((v) => v.name)))];
  const model: HistoryRun[] = runs.map((r, i) => {
    const prov = provenanceOf(r.results);
    const byVariant: Record<string, HistoryPoint> = {};
    for (const v of r.results.variants) {
      byVariant[v.name] = {
        peakMemoryBytes: v.peakMemoryBytes,
        memoryLimitBytes: v.memoryLimitBytes,
        oomKills: v.oomKills,
        bystanderSuccess: bystandersOf(v)?.successRatio ?? null,
        agentVersion: v.agent.version ?? null,
        ran: v.error === undefined,
      };
    }
    return {
      dir: r.dir,
      startedAt: r.results.startedAt,
      status: r.results.status,
      verdict: r.results.verdict,
      commit: prov?.git?.commit ?? null,
      dirty: prov?.git?.dirty ?? null,
      toolVersion: r.results.tool.version,
      scenarioHash: prov?.scenarioHash ?? null,
      upgradedFrom: r.upgradedFrom,
      byVariant,
      gate: i === 0 ? null : gateAgainst(runs[i - 1]!, r, tolerances),
    };
  });
  return { scenario, folder: root, tolerance: opts.toleranceText ?? '10% (defaults)', variants, runs: model, skipped };
}

function gateAgainst(prev: Loaded, cur: Loaded, tolerances: Tolerances): HistoryRun['gate'] {
  if (prev.upgradedFrom !== cur.upgradedFrom) {
    const v = (l: Loaded) => l.upgradedFrom ?? RESULTS_SCHEMA_VERSION;
    return { against: prev.dir, refused: `results schemaVersion ${v(prev)} → ${v(cur)}: a baseline gate refuses another schema` };
  }
  let cmp: BaselineComparison;
  try {
    cmp = compareWithBaseline(prev.results, cur.results, tolerances, { from: prev.dir });
  } catch (err) {
    return { against: prev.dir, refused: (err as Error).message };
  }
  const regressed = cmp.figures.filter((f) => f.verdict === 'regressed');
  const regressions = regressed.map((f) => `${f.variant} ${f.label} ${changeText(f)} (${f.rule})`);
  return { against: prev.dir, regressions, regressedVariants: [...new Set(regressed.map((f) => f.variant))], improved: cmp.improved, notes: cmp.notes };
}

/** A run a baseline gate against the previous run would have failed (for one variant, when named). */
export function gateFailed(run: HistoryRun, variant?: string): boolean {
  if (run.gate === null || !('regressions' in run.gate)) return false;
  return variant === undefined ? run.gate.regressions.length > 0 : run.gate.regressedVariants.includes(variant);
}
