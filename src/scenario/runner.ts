// `attestorm run` for one scenario: every repetition × variant under identical load. results.json
// says `running` (with the runner's pid) from the first moment, is rewritten after each variant
// run, and ends `complete`, `interrupted` or `failed`; expectations are judged at the end.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { detectCgroupHost, removeIfEmpty, removeTree, throttledSeconds, type CpuBudget } from '../cgroup/index.js';
import { currentRunner, RESULTS_SCHEMA_VERSION, type RunEnvironment, type RunResults, type VariantResult } from '../contract/index.js';
import { collectProvenance } from '../ci/index.js';
import { ConfigError, EXIT } from '../errors.js';
import { burstProblems, faultProblems, faultScheduleProblems } from '../fault/index.js';
import { MAX_WORKERS_TOTAL } from '../load/index.js';
import { renderReports } from '../report/index.js';
import { newRunId, tempRoot } from '../sandbox/index.js';
import { modeledCosts, prepareTargets, targetKind, variantPlacement } from '../target/index.js';
import { formatMiB, onCleanup, onInterrupt, PROJECT_ROOT } from '../util/index.js';
import { aggregateVariant, type RepMeasurement } from './aggregate.js';
import { isolateRunner, planIsolation } from './cpu-isolation.js';
import { describeEnvironment } from './environment.js';
import { applyExpectations } from './expectations.js';
import type { LoadedScenario } from './load-scenario.js';
import type { LoadDriver } from './load-driver.js';
import { Progress } from './progress.js';
import { createRunDir, defaultRunDir, linkLatest, writeResults, writeScenarioCopy } from './run-folder.js';
import { preflightVariants } from './variant-preflight.js';
import { comparisonTable } from './summary-table.js';
import { runVariant, type VariantRunContext } from './variant-run.js';

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
  /** Expectations dropped because only some variants run (recorded and printed). */
  droppedExpectations?: string[];
  /**
   * Runs each repetition somewhere else than the local sandbox (kind mode): same inputs, the same
   * RepMeasurement back. Default: the local sandbox (runVariant).
   */
  runRepetition?: (ctx: VariantRunContext) => Promise<RepMeasurement>;
  /**
   * What the faults of a run elsewhere need, in place of the local check (a cluster maps some
   * actions through its API and refuses the rest): every problem, one message each.
   */
  faultProblems?: (scenario: LoadedScenario['scenario']) => string[];
  /** The CPU quota the whole run is under (--cpu-budget), recorded in results.json; null/absent = none. */
  cpuBudget?: CpuBudget | null;
  /** Where the variants ran, for results.json ('local' unless a cluster runner is given). */
  platform?: { name: 'local' | 'kind' | 'cluster'; detail?: Record<string, unknown> };
  /**
   * How the variants' agents were measured when they ran elsewhere (a cluster: the kernel's OOM
   * kills, the kubelet's pod cgroups), in place of this host's; a repetition may complete it
   * (onEnvironment). Default: this host's cgroups.
   */
  environment?: Pick<RunEnvironment, 'cgroupVersion' | 'oomFidelity' | 'podFidelity' | 'cpuShare'>;
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

/**
 * Faults a variant's agent cannot take (no cgroup to squeeze, no pid to kill), faults after the
 * load's end and bursts past the generator's process cap: one ConfigError, before anything starts.
 * `elsewhere` replaces the local capability rules for runs that do not use this machine's agent (a cluster).
 */
export function validateFaults(s: LoadedScenario['scenario'], elsewhere?: (s: LoadedScenario['scenario']) => string[]): void {
  if (!s.faults.length) return;
  if (elsewhere) {
    const problems = [...faultScheduleProblems(s.faults, s.duration), ...elsewhere(s)];
    if (problems.length) throw new ConfigError(problems);
    return;
  }
  const { host, reason } = detectCgroupHost();
  const problems = [...faultScheduleProblems(s.faults, s.duration), ...burstProblems(s.faults, s.load.pods * s.load.workersPerPod, MAX_WORKERS_TOTAL)];
  for (const v of s.variants) {
    problems.push(...faultProblems(s.faults, targetKind(v.agent.kind).faults(v.name, v.agent, host, reason)));
  }
  if (problems.length) throw new ConfigError([...new Set(problems)]);
}

/** Exit status of a finished run: interrupted, not carried out, expectations failed, or ok. */
export function exitCodeOf(results: RunResults): number {
  if (results.status === 'interrupted' || results.status === 'incomplete') return EXIT.INTERRUPTED;
  if (results.status === 'failed') return EXIT.RUN_FAILED;
  return results.passed ? EXIT.OK : EXIT.EXPECTATIONS_FAILED;
}

export async function runScenario(opts: RunScenarioOptions): Promise<RunScenarioOutcome> {
  const { file } = opts.loaded;
  // The generator's own rules, and every fault against every variant, before anything starts.
  opts.load.validate(opts.loaded.scenario, opts.runRepetition !== undefined ? 'cluster' : 'local');
  validateFaults(opts.loaded.scenario, opts.faultProblems);
  // Each variant's binaries and their release's settings, too; variants without binaries are skipped.
  const preflight = await preflightVariants(opts.loaded.scenario);
  const s = preflight.scenario;
  // Agents someone else runs need no cgroup of this machine's.
  const onlyExternal = s.variants.every((v) => !targetKind(v.agent.kind).started);

  const inCluster = opts.runRepetition !== undefined;
  const { host, reason: cgroupReason } = onlyExternal || inCluster ? { host: null, reason: inCluster ? 'variants run in a cluster' : 'external agents only' } : detectCgroupHost();
  // Refused here, before anything starts, when the machine lacks the CPUs asked for.
  const isolation = planIsolation(s, host, inCluster ? 'variants run in a cluster' : null);
  // What each kind needs once per run (the reference agent's bundle), before the first repetition.
  const targets = await prepareTargets(s.variants.map((v) => v.agent));
  const runId = newRunId(s.name.slice(0, 20));
  const throttledAtStart = opts.cpuBudget ? throttledSeconds(opts.cpuBudget) : null;
  const runDir = createRunDir(opts.outDir ?? defaultRunDir(s.name));
  linkLatest(runDir);
  writeScenarioCopy(runDir, s);

  const cpuModes = [...new Set(s.variants.map((v) => targetKind(v.agent.kind).cpu(v.agent)).filter((c) => c !== null).map((c) => (c.mode === 'cgroup' ? (host ? `cpu-weight ${c.weight}` : 'none (no cgroup)') : c.mode === 'nice' ? `nice ${c.nice}` : 'none')))];
  const results: RunResults = {
    schemaVersion: RESULTS_SCHEMA_VERSION,
    tool: { name: 'attestorm', version: toolVersion() },
    scenario: { name: s.name, description: s.description, file, resolved: s, written: opts.loaded.raw, modeledCosts: modeledCosts(s) },
    command: opts.command,
    environment: describeEnvironment({
      cgroupVersion: opts.environment ? opts.environment.cgroupVersion : host?.version ?? null,
      oomFidelity: opts.environment?.oomFidelity ?? (host ? 'cgroup-oom' : 'emulated-oom'),
      // Filled from the first sandbox; the sandbox decides whether pods get real cgroups.
      podFidelity: opts.environment?.podFidelity ?? (host ? 'cgroup-pods' : 'uid-only'),
      cpuShare: opts.environment?.cpuShare ?? (cpuModes.join(', ') || 'none'),
      ...(isolation.record ? { isolation: isolation.record } : {}),
      ...(opts.cpuBudget ? { cpuBudget: { cores: opts.cpuBudget.cores, throttledSeconds: null } } : {}),
    }),
    runner: currentRunner(),
    platform: opts.platform ?? { name: 'local' },
    provenance: collectProvenance({ projectRoot: PROJECT_ROOT, toolVersion: toolVersion(), resolvedScenario: s }) as unknown as Record<string, unknown>,
    startedAt: new Date().toISOString(),
    endedAt: null,
    status: 'running',
    variants: [],
    droppedExpectations: [...(opts.droppedExpectations ?? []), ...preflight.dropped],
    ...(preflight.skipped.length ? { skippedVariants: preflight.skipped } : {}),
    verdict: 'inconclusive',
    passed: false,
  };
  if (!host && !onlyExternal && !inCluster) process.stderr.write(`attestorm: agent OOMs are emulated by an RSS watchdog: ${cgroupReason}\n`);
  for (const k of preflight.skipped) process.stderr.write(`attestorm: variant ${k.name} skipped: ${k.reason}\n`);
  for (const d of results.droppedExpectations) process.stderr.write(`attestorm: expectation dropped (variant subset): ${d}\n`);
  if (isolation.record && !isolation.record.applied) process.stderr.write(`attestorm: CPU isolation ${isolation.record.detail}\n`);
  writeResults(runDir, results);

  // From here on the runner (and every pod it forks) stays off the agent's CPUs.
  let unisolate: () => void = () => {};
  if (isolation.plan && host) {
    try {
      unisolate = isolateRunner(host, runId, isolation.plan);
    } catch (err) {
      results.environment.isolation = { ...isolation.record!, applied: false, detail: `not applied: cannot create or join the runner's cpuset: ${(err as Error).message}` };
      process.stderr.write(`attestorm: CPU isolation ${results.environment.isolation.detail}\n`);
      isolation.plan = null;
      writeResults(runDir, results);
    }
  }

  const abort = new AbortController();
  let interrupted = false;
  const offInterrupt = onInterrupt(() => {
    interrupted = true;
    abort.abort();
  });
  let finish: () => void = () => {};
  const finished = new Promise<void>((r) => (finish = r));
  // On SIGINT the reaper awaits this: the main flow stops the load, reaps, and writes the results.
  // The abort reaches every wait (agent starts and restarts included), so this is a ceiling only.
  const offCleanup = onCleanup(async () => {
    abort.abort();
    await Promise.race([finished, new Promise((r) => setTimeout(r, 90_000).unref())]);
  });

  const progress = opts.progress ?? new Progress();
  const reps = new Map<string, RepMeasurement[]>(s.variants.map((v) => [v.name, []]));
  const describedAgents = new Map<string, Partial<VariantResult['agent']>>();
  const summarize = (): VariantResult[] =>
    s.variants
      .filter((v) => reps.get(v.name)!.length)
      .map((v) => {
        const run = reps.get(v.name)!;
        const record = { kind: v.agent.kind, ...variantPlacement(v.agent), ...(describedAgents.get(v.name) ?? {}) };
        return aggregateVariant(v.name, record, run, (enc) => opts.load.summarize(enc));
      });

  try {
    outer: for (let rep = 1; rep <= s.repetitions; rep++) {
      for (const variant of s.variants) {
        if (abort.signal.aborted) break outer;
        const label = s.repetitions > 1 ? `${variant.name} (rep ${rep}/${s.repetitions})` : variant.name;
        progress.placementStart(label, s.duration);
        const m = await (opts.runRepetition ?? runVariant)({
          scenario: s,
          variant,
          runDir,
          runId,
          rep,
          host,
          targets,
          ...(isolation.plan ? { agentCpus: isolation.plan.agentCpus } : {}),
          load: opts.load,
          signal: abort.signal,
          onSample: (line) => progress.onSample(line),
          onSandbox: (sb) => {
            results.environment.podFidelity = sb.fidelity;
          },
          onDescribe: (agent) => describedAgents.set(variant.name, agent),
          onEnvironment: (patch) => Object.assign(results.environment, patch),
          onPlatform: (detail) => {
            const platform = results.platform ?? { name: 'cluster' };
            results.platform = { ...platform, detail: { ...platform.detail, ...detail } };
          },
        });
        reps.get(variant.name)!.push(m);
        progress.placementEnd(
          m.error
            ? `failed: ${m.error}`
            : `peak ${m.peakMemoryBytes === null ? 'unmeasured' : formatMiB(m.peakMemoryBytes)} of ${formatMiB(m.memoryLimitBytes, 0)}, OOM kills ${m.oomKills}, restarts ${m.restarts}, ok ${(m.counts.ok / Math.max(1, m.loadSeconds)).toFixed(1)}/s`,
        );
        results.variants = summarize();
        writeResults(runDir, results);
      }
    }
  } finally {
    progress.stop();
    offInterrupt();
    try {
      unisolate();
    } catch (err) {
      process.stderr.write(`attestorm: cannot move the runner back to its own cpuset: ${(err as Error).message}\n`);
    }
    for (const base of [host?.memoryBase, host?.cpuBase, host?.freezerBase, host?.cpusetBase]) {
      if (!base) continue;
      await removeTree(join(base, 'attestorm', runId)).catch((err: Error) => process.stderr.write(`attestorm: cannot remove the run's cgroups: ${err.message}\n`));
      // The shared parent goes too once no other run uses it: a finished run leaves no cgroup.
      removeIfEmpty(join(base, 'attestorm'));
    }
    rmSync(join(tempRoot(), runId), { recursive: true, force: true });
  }

  results.variants = summarize();
  if (opts.cpuBudget && results.environment.cpuBudget) {
    const end = throttledSeconds(opts.cpuBudget);
    results.environment.cpuBudget.throttledSeconds = end === null || throttledAtStart === null ? null : +(end - throttledAtStart).toFixed(2);
  }
  const verdict = applyExpectations(results.variants, s.expect, s.failOnInconclusive);
  const ranAll = s.variants.every((v) => results.variants.some((r) => r.name === v.name && !r.error));
  const allFailed = results.variants.length > 0 && results.variants.every((p) => !!p.error);
  results.status = interrupted ? 'interrupted' : allFailed ? 'failed' : 'complete';
  if (interrupted) results.statusDetail = `interrupted after ${results.variants.length} of ${s.variants.length} variant(s) had data`;
  // Nothing that did not run may pass: an interrupted or partial run is never passed.
  results.verdict = results.status === 'complete' && ranAll ? verdict : verdict === 'failed' ? 'failed' : 'inconclusive';
  results.passed = results.status === 'complete' && ranAll && results.variants.every((v) => v.passed);
  results.endedAt = new Date().toISOString();
  writeResults(runDir, results);
  finish();
  offCleanup();

  (opts.tableStream ?? process.stderr).write(`\n${s.name}: ${results.status}, verdict ${results.verdict}, results in ${runDir}\n${comparisonTable(results)}${preflight.skipped.map((k) => `skipped: ${k.name} (${k.reason})\n`).join('')}`);
  if (opts.render !== false && !interrupted) {
    try {
      const { files } = await renderReports(runDir);
      (opts.tableStream ?? process.stderr).write(`reports: ${files.join(', ')}\n`);
    } catch (err) {
      process.stderr.write(`attestorm: rendering the reports failed (the data is complete; retry with attestorm report ${runDir}): ${(err as Error).message}\n`);
    }
  }
  if (allFailed) process.stderr.write(`attestorm: no variant could be run: ${results.variants.map((p) => `${p.name}: ${p.error}`).join('; ')}\n`);
  return { runDir, results, exitCode: exitCodeOf(results) };
}
