// `attestorm run` for one scenario: every repetition × placement under identical load, results.json
// rewritten after each placement, expectations judged at the end, everything reaped on SIGINT.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { detectCgroupHost, removeIfEmpty, removeTree } from '../cgroup/index.js';
import { EXIT } from '../errors.js';
import { renderReports } from '../report/index.js';
import { newRunId, tempRoot } from '../sandbox/index.js';
import { bundleEntry, formatMiB, onCleanup, onInterrupt, PROJECT_ROOT } from '../util/index.js';
import { modeledCosts } from './agent-config.js';
import { aggregatePlacement, type RepMeasurement } from './aggregate.js';
import { describeEnvironment } from './environment.js';
import { applyExpectations } from './expectations.js';
import type { LoadedScenario } from './load-scenario.js';
import type { LoadDriver } from './load-driver.js';
import { runPlacement } from './placement-run.js';
import { Progress } from './progress.js';
import { RESULTS_SCHEMA_VERSION, type PlacementName, type PlacementResult, type RunResults } from './results.js';
import { createRunDir, defaultRunDir, linkLatest, writeResults, writeScenarioCopy } from './run-folder.js';
import { scenarioPlacements } from './schema.js';
import { comparisonTable } from './summary-table.js';

export interface RunScenarioOptions {
  loaded: LoadedScenario;
  load: LoadDriver;
  /** Run folder; default reports/<scenario>-<timestamp>. */
  outDir?: string;
  /** The command line that reproduces the run (recorded in results.json). */
  command: string;
  progress?: Progress;
  /** Render the HTML/Markdown reports at the end (default true). */
  render?: boolean;
  /** Where the comparison table goes (default stderr). */
  tableStream?: NodeJS.WritableStream;
}

export interface RunScenarioOutcome {
  runDir: string;
  results: RunResults;
  exitCode: number;
}

function toolVersion(): string {
  try {
    return (JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}

/** Exit status of a finished run: interrupted, not carried out, expectations failed, or ok. */
export function exitCodeOf(results: RunResults): number {
  if (results.status === 'interrupted') return EXIT.INTERRUPTED;
  if (results.status === 'failed') return EXIT.RUN_FAILED;
  return results.passed ? EXIT.OK : EXIT.EXPECTATIONS_FAILED;
}

export async function runScenario(opts: RunScenarioOptions): Promise<RunScenarioOutcome> {
  const { scenario: s, file } = opts.loaded;
  // The generator's own rules, before anything starts.
  opts.load.validate(s);
  const placements = scenarioPlacements(s);
  const external = !!s.target;

  const { host, reason: cgroupReason } = external ? { host: null, reason: 'external target' } : detectCgroupHost();
  const agentBundle = external ? null : await bundleEntry(join(PROJECT_ROOT, 'src/scenario/agent-entry.ts'));
  const runId = newRunId(s.name.slice(0, 20));
  const runDir = createRunDir(opts.outDir ?? defaultRunDir(s.name));
  linkLatest(runDir);
  writeScenarioCopy(runDir, s);

  const cpuShare = s.agent.cpu.mode === 'cgroup' ? (host ? `cpu-weight ${s.agent.cpu.weight}` : 'none (no cgroup)') : s.agent.cpu.mode === 'nice' ? `nice ${s.agent.cpu.nice}` : 'none';
  const results: RunResults = {
    schemaVersion: RESULTS_SCHEMA_VERSION,
    tool: { name: 'attestorm', version: toolVersion() },
    scenario: { name: s.name, description: s.description, file, resolved: s, modeledCosts: modeledCosts(s) },
    command: opts.command,
    environment: describeEnvironment({
      cgroupVersion: host?.version ?? null,
      oomFidelity: host ? 'cgroup-oom' : 'emulated-oom',
      // Filled from the first sandbox; the sandbox decides whether pods get real cgroups.
      podFidelity: host ? 'cgroup-pods' : 'uid-only',
      cpuShare,
    }),
    startedAt: new Date().toISOString(),
    endedAt: null,
    status: 'complete',
    placements: [],
    passed: false,
  };
  if (!host && !external) process.stderr.write(`attestorm: agent OOMs are emulated by an RSS watchdog: ${cgroupReason}\n`);
  writeResults(runDir, results);

  const abort = new AbortController();
  let interrupted = false;
  const offInterrupt = onInterrupt(() => {
    interrupted = true;
    abort.abort();
  });
  let finish: () => void = () => {};
  const finished = new Promise<void>((r) => (finish = r));
  // On SIGINT the reaper awaits this: the main flow stops the load, reaps, and writes the results.
  const offCleanup = onCleanup(async () => {
    abort.abort();
    await Promise.race([finished, new Promise((r) => setTimeout(r, 30_000).unref())]);
  });

  const progress = opts.progress ?? new Progress();
  const reps = new Map<string, RepMeasurement[]>(placements.map((p) => [p, []]));
  const summarize = (m: Map<string, RepMeasurement[]>): PlacementResult[] =>
    placements.filter((p) => m.get(p)!.length).map((p) => aggregatePlacement(p as PlacementName, m.get(p)!, (enc) => opts.load.summarize(enc)));

  try {
    outer: for (let rep = 1; rep <= s.repetitions; rep++) {
      for (const placement of placements) {
        if (abort.signal.aborted) break outer;
        const label = s.repetitions > 1 ? `${placement} (rep ${rep}/${s.repetitions})` : placement;
        progress.placementStart(label, s.duration);
        const m = await runPlacement({
          scenario: s,
          runDir,
          runId,
          placement,
          rep,
          host,
          agentBundle,
          load: opts.load,
          signal: abort.signal,
          onSample: (_p, line) => progress.onSample(line),
          onSandbox: (sb) => {
            results.environment.podFidelity = sb.fidelity;
          },
        });
        reps.get(placement)!.push(m);
        progress.placementEnd(
          m.error
            ? `failed: ${m.error}`
            : `peak ${formatMiB(m.peakMemoryBytes)} of ${formatMiB(m.memoryLimitBytes, 0)}, OOM kills ${m.oomKills}, restarts ${m.restarts}, ok ${(m.counts.ok / Math.max(1, m.loadSeconds)).toFixed(1)}/s`,
        );
        results.placements = summarize(reps);
        writeResults(runDir, results);
      }
    }
  } finally {
    progress.stop();
    offInterrupt();
    for (const base of [host?.memoryBase, host?.cpuBase]) {
      if (!base) continue;
      await removeTree(join(base, 'attestorm', runId)).catch(() => {});
      // The shared parent goes too once no other run uses it: a finished run leaves no cgroup.
      removeIfEmpty(join(base, 'attestorm'));
    }
    rmSync(join(tempRoot(), runId), { recursive: true, force: true });
  }

  results.placements = summarize(reps);
  results.passed = applyExpectations(results.placements, s.expect);
  const allFailed = results.placements.length > 0 && results.placements.every((p) => !!p.error);
  results.status = interrupted ? 'interrupted' : allFailed ? 'failed' : 'complete';
  results.endedAt = new Date().toISOString();
  writeResults(runDir, results);
  finish();
  offCleanup();

  (opts.tableStream ?? process.stderr).write(`\n${s.name}: ${results.status}, results in ${runDir}\n${comparisonTable(results)}`);
  if (opts.render !== false && !interrupted) {
    try {
      const { files } = await renderReports(runDir);
      (opts.tableStream ?? process.stderr).write(`reports: ${files.join(', ')}\n`);
    } catch (err) {
      process.stderr.write(`attestorm: rendering the reports failed (the data is complete; retry with attestorm report ${runDir}): ${(err as Error).message}\n`);
    }
  }
  if (allFailed) process.stderr.write(`attestorm: no placement could be run: ${results.placements.map((p) => `${p.name}: ${p.error}`).join('; ')}\n`);
  return { runDir, results, exitCode: exitCodeOf(results) };
}
