// The run folder's data contract: results.json (RunResults here, each variant's record in
// variant-result.ts) and the NDJSON sample lines (sample-lines.ts). The runner writes these as it
// goes; `attestorm report` reads nothing else. Bump RESULTS_SCHEMA_VERSION on any incompatible
// change to any of them.
//
// Run folder layout:
//   <run>/scenario.yaml                 the scenario as given (after defaults are applied, as YAML)
//   <run>/results.json                  RunResults (status running from the start, rewritten after each variant run)
//   <run>/<variant>.r<rep>/samples.ndjson     one SampleLine per line, appended while it runs
//   <run>/<variant>.r<rep>/agent.log          the agent's log
// `rep` counts from 1. Times `t` in samples are milliseconds since that variant run's load start
// (negative during start-up and warm-up).
import type { Verdict } from './terms.js';
import type { VariantResult } from './variant-result.js';

export const RESULTS_SCHEMA_VERSION = 3;
/** Older folders `attestorm report` still reads (converted on load). */
export const READABLE_SCHEMA_VERSIONS = [1, 2, 3] as const;

/** running until the runner ends; incomplete when a reader finds the runner gone while it says running. */
export type RunStatus = 'running' | 'complete' | 'interrupted' | 'failed' | 'incomplete';

/** CPU isolation of the agent (scenario `isolation`): what was asked, and whether it was applied. */
export interface IsolationRecord {
  mode: 'cpuset';
  /** CPUs the agent runs on alone, kernel list form ("1"). */
  agentCpus: string;
  /** CPUs of the runner, pods and workers. */
  otherCpus: string;
  applied: boolean;
  /** What was done, or "not applied: <why>". */
  detail: string;
}

export interface RunEnvironment {
  cgroupVersion: 'v1' | 'v2' | null;
  /** 'cgroup-oom': real kernel OOM kills in a memory cgroup; 'emulated-oom': RSS watchdog SIGKILL. */
  oomFidelity: 'cgroup-oom' | 'emulated-oom';
  /** 'cgroup-pods': pods have real kubelet-named cgroups; 'uid-only': no cgroups, OS UIDs only. */
  podFidelity: 'cgroup-pods' | 'uid-only';
  /** How the agent's CPU share is set: 'cpu-weight' (cgroup) or 'nice' or 'none'. */
  cpuShare: string;
  /**
   * cgroup v2: how the runner came by a subtree it may enable controllers in (root-cgroup, leaf-move,
   * systemd-scope, fresh-cgroup, container-init), the base its cgroups were made below, and what was done.
   */
  cgroupDelegation?: { kind: string; base: string; detail: string };
  /** Present when the scenario asked for CPU isolation. */
  isolation?: IsolationRecord;
  /**
   * Present when the whole run ran under a CPU quota (--cpu-budget): the cores it allowed, and the
   * time its cgroup was throttled over the run (null until the run ends or where unreadable).
   */
  cpuBudget?: { cores: number; throttledSeconds: number | null };
  nodeVersion: string;
  platform: string;
  cpus: number;
  memoryBytes: number;
  hostname: string;
}

/**
 * The run's verdict: a variant's (passed, failed, inconclusive), or compared when the run judged no
 * expectation at all (none written, or every one dropped): figures side by side, nothing passed.
 */
export type RunVerdict = Verdict | 'compared';

/** What the verdict judged: the scenario's rules counted by outcome, and each rule left unjudged with why. */
export interface JudgementRecord {
  /** Rules that were decided: passed plus failed. */
  judged: number;
  passed: number;
  failed: number;
  /** Rules evaluated but not decided: only a bound measured, or the figure unmeasured here. */
  undecided: number;
  /**
   * Rules not judged, each "<variant>.<rule> (<why>)": its variant not run (--variants, a missing
   * build), its variant's storm too weak or its machine too busy, or what it compares with not shown.
   */
  dropped: string[];
}

export interface SkippedVariant {
  name: string;
  reason: string;
}

export interface RunResults {
  schemaVersion: typeof RESULTS_SCHEMA_VERSION;
  tool: { name: 'attestorm'; version: string };
  scenario: {
    name: string;
    description: string;
    /** Path of the scenario file as given on the command line. */
    file: string | null;
    /** The fully resolved scenario (defaults applied), as plain JSON (durations in ms, sizes in bytes). */
    resolved: unknown;
    /** The scenario as written (file plus flag overrides), units as the user wrote them. */
    written?: unknown;
    /** Modeled costs in effect (non-default model.* settings), e.g. { attestationWorkingSet: "256Ki" }. */
    modeledCosts: Record<string, unknown>;
  };
  /** The exact command that reproduces this run. */
  command: string;
  environment: RunEnvironment;
  /** Where the variants ran: the local sandbox, a kind cluster or another cluster (with its facts). */
  platform?: { name: 'local' | 'kind' | 'cluster'; detail?: Record<string, unknown> };
  /** The process that writes this folder; while status is running, a reader checks it is still alive. */
  runner: { pid: number; hostname: string; /** /proc/<pid>/stat start time (clock ticks since boot), guards against PID reuse. */ startTicks: number | null };
  startedAt: string;
  endedAt: string | null;
  status: RunStatus;
  /** Why the status is what it is, when not plainly complete ("runner pid 123 is gone"). */
  statusDetail?: string;
  variants: VariantResult[];
  /** Expectations dropped because a subset of variants was run (--variants). */
  droppedExpectations: string[];
  /** Variants of the scenario that did not run because what they need is not given (e.g. a SPIRE build), with the reason; absent when none. */
  skippedVariants?: SkippedVariant[];
  /**
   * failed if any variant failed; inconclusive if none failed and one was; compared if no rule was
   * judged; passed only if every variant ran and passed and at least one rule was judged.
   */
  verdict: RunVerdict;
  /** The rules the verdict rests on, and those it could not judge (absent in folders written before it was kept). */
  judgement?: JudgementRecord;
  /**
   * What CI needs to correlate runs: git commit of the checkout, tool version, scenario hash,
   * machine and CI facts (src/ci/provenance.ts fills it; its shape is documented there).
   */
  provenance?: Record<string, unknown>;
  /** The comparison with a baseline run, when `--baseline` was given (src/ci/baseline.ts). */
  baseline?: Record<string, unknown>;
  /** True when the verdict is passed, or inconclusive without failOnInconclusive: never for compared. */
  passed: boolean;
}
