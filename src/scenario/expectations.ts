// Evaluating a scenario's `expect` block against the aggregated variant results. Each rule gives
// one ExpectationResult: passed, failed, or inconclusive. An OOM-killed agent's recorded peak is the
// kernel's high-water mark at its limit, so its true demand is only known to be at least that: a
// bound. A bound that decides a rule passes or fails it; one that cannot decide it is inconclusive.
import { cpuQuotaCores } from '../cgroup/index.js';
import type { ExpectationResult, Verdict, VariantResult } from '../contract/index.js';
import { evaluateBystanderExpectations } from '../load/index.js';
import { cpus } from 'node:os';
import { formatMiB, parseBytes } from '../util/index.js';
import type { ExpectInput } from './schema.js';

type Ratio = { to: string; value: number };

const mib = (b: number) => formatMiB(b);
const rps = (n: number) => `${n.toFixed(1)}/s`;

function result(name: string, expected: unknown, actual: unknown, verdict: Verdict, basis: ExpectationResult['basis'], message: string): ExpectationResult {
  return { name, expected, actual, verdict, basis, message };
}

/** A peak is exact unless the agent was OOM-killed: then it only bounds the demand from below. */
const isBound = (p: Pick<VariantResult, 'oomKills'>) => p.oomKills > 0;
const peakText = (p: VariantResult) =>
  p.peakMemoryBytes === null ? 'unmeasured' : isBound(p) ? `≥ ${mib(p.peakMemoryBytes)} (OOM-killed)` : mib(p.peakMemoryBytes);

function ratioCheck(
  kind: 'maxPeakRatio' | 'minPeakRatio',
  r: Ratio,
  self: VariantResult,
  all: readonly VariantResult[],
  unshown: ReadonlyMap<string, string>,
): ExpectationResult {
  const checked = ratioVerdict(kind, r, self, all);
  // A ratio to a variant that did not show its shape (too weak a storm, an agent behind it) judges nothing.
  const why = unshown.get(r.to);
  if (checked.verdict === 'failed' && why) return { ...checked, verdict: 'inconclusive', message: `not judged (${r.to}'s ${why}): ${checked.message}` };
  return checked;
}

function ratioVerdict(kind: 'maxPeakRatio' | 'minPeakRatio', r: Ratio, self: VariantResult, all: readonly VariantResult[]): ExpectationResult {
  const other = all.find((p) => p.name === r.to);
  if (!other || other.error) return result(kind, r, null, 'inconclusive', 'none', `${r.to} was not measured in this run, so the ratio cannot be judged`);
  // Unmeasured (null) is not a failure of the agent: nothing could read its memory here.
  if (self.peakMemoryBytes === null || other.peakMemoryBytes === null) {
    return result(
      kind,
      r,
      null,
      'inconclusive',
      'none',
      `${self.peakMemoryBytes === null ? 'this variant' : r.to}'s peak memory is unmeasured in this run, so the ratio cannot be judged`,
    );
  }
  if (other.peakMemoryBytes <= 0) return result(kind, r, null, 'failed', 'none', `${r.to} has no peak memory to compare with (its memory was not sampled)`);
  const ratio = self.peakMemoryBytes / other.peakMemoryBytes;
  const actual = +ratio.toFixed(4);
  const shown = `${ratio.toFixed(2)}× ${r.to} (${peakText(self)} / ${peakText(other)})`;
  const selfBound = isBound(self);
  const otherBound = isBound(other);
  const basis = selfBound || otherBound ? 'bound' : 'measured';
  if (kind === 'maxPeakRatio') {
    // self_true ≤ v × other_true? self_true ≥ self, other_true ≥ other.
    if (!selfBound && ratio <= r.value)
      return result(
        kind,
        r,
        actual,
        'passed',
        basis,
        `peak ${shown} <= ${r.value}×${otherBound ? ` (${r.to}'s true peak is at least its recorded one, so this holds)` : ''}`,
      );
    if (!otherBound && ratio > r.value)
      return result(kind, r, actual, 'failed', basis, `peak ${shown} > ${r.value}×${selfBound ? ' (and its true peak is higher still)' : ''}`);
    return result(
      kind,
      r,
      actual,
      'inconclusive',
      basis,
      `peak ${shown}: cannot tell whether <= ${r.value}× — ${selfBound ? 'this variant' : r.to} was OOM-killed, so its true peak is unknown (run it unconstrained to measure it)`,
    );
  }
  // minPeakRatio: self_true ≥ v × other_true?
  if (!otherBound && ratio >= r.value)
    return result(kind, r, actual, 'passed', basis, `peak ${shown} >= ${r.value}×${selfBound ? ' (its true peak is higher still)' : ''}`);
  if (!selfBound && ratio < r.value)
    return result(kind, r, actual, 'failed', basis, `peak ${shown} < ${r.value}×${otherBound ? ` (and ${r.to}'s true peak is higher still)` : ''}`);
  return result(
    kind,
    r,
    actual,
    'inconclusive',
    basis,
    `peak ${shown}: cannot tell whether >= ${r.value}× — ${otherBound ? r.to : 'this variant'} was OOM-killed, so its true peak is unknown (run it unconstrained to measure it)`,
  );
}

/** Every rule of one variant's expect block. */
export function evaluateExpectations(
  self: VariantResult,
  expect: ExpectInput | undefined,
  all: readonly VariantResult[],
  unshown: ReadonlyMap<string, string> = new Map(),
): ExpectationResult[] {
  if (!expect) return [];
  const out: ExpectationResult[] = [];
  if (self.error) {
    out.push(result('run', 'carried out', 'failed', 'failed', 'none', `the variant could not be run: ${self.error}`));
    return out;
  }
  out.push(...evaluateBystanderExpectations(expect, self.bystanders));
  if (expect.oomKilled !== undefined) {
    const killed = self.oomKills > 0;
    const ok = killed === expect.oomKilled;
    const where = self.deaths.filter((d) => d.counted && d.cause !== 'signal' && d.cause !== 'exit').map((d) => d.phase);
    const msg = killed ? `OOM-killed ${self.oomKills} time(s)${where.length ? ` (in ${[...new Set(where)].join(', ')})` : ''}` : 'not OOM-killed';
    out.push(
      result(
        'oomKilled',
        expect.oomKilled,
        killed,
        ok ? 'passed' : 'failed',
        'measured',
        `${msg}, expected ${expect.oomKilled ? 'at least one OOM kill' : 'none'}`,
      ),
    );
  }
  const peak = self.peakMemoryBytes;
  if (peak === null) {
    for (const key of ['maxPeakMemory', 'minPeakMemory'] as const) {
      if (expect[key] !== undefined)
        out.push(result(key, expect[key], null, 'inconclusive', 'none', "peak memory unmeasured: nothing could read the agent's memory in this run"));
    }
  } else if (expect.maxPeakMemory !== undefined) {
    const limit = parseBytes(expect.maxPeakMemory)!;
    const over = peak > limit;
    const verdict: Verdict = over ? 'failed' : isBound(self) ? 'inconclusive' : 'passed';
    const msg = over
      ? `peak memory ${peakText(self)} > ${mib(limit)}`
      : isBound(self)
        ? `peak memory ${peakText(self)}: the true peak may exceed ${mib(limit)}`
        : `peak memory ${mib(peak)} <= ${mib(limit)}`;
    out.push(result('maxPeakMemory', expect.maxPeakMemory, peak, verdict, isBound(self) ? 'bound' : 'measured', msg));
  }
  if (peak !== null && expect.minPeakMemory !== undefined) {
    const min = parseBytes(expect.minPeakMemory)!;
    const ok = peak >= min;
    const verdict: Verdict = ok ? 'passed' : isBound(self) ? 'inconclusive' : 'failed';
    out.push(
      result(
        'minPeakMemory',
        expect.minPeakMemory,
        peak,
        verdict,
        isBound(self) ? 'bound' : 'measured',
        `peak memory ${peakText(self)} ${ok ? '>=' : '<'} ${mib(min)}`,
      ),
    );
  }
  if (expect.minOkRps !== undefined) {
    const ok = self.okRps >= expect.minOkRps;
    out.push(
      result(
        'minOkRps',
        expect.minOkRps,
        self.okRps,
        ok ? 'passed' : 'failed',
        'measured',
        `ok calls ${rps(self.okRps)} ${ok ? '>=' : '<'} ${rps(expect.minOkRps)}`,
      ),
    );
  }
  if (expect.minAdmittedSuccess !== undefined) out.push(admittedSuccessCheck(self, expect.minAdmittedSuccess));
  if (expect.maxErrorRps !== undefined) {
    const errors = self.errorRps + self.deadlineExceededRps;
    const ok = errors <= expect.maxErrorRps;
    out.push(
      result(
        'maxErrorRps',
        expect.maxErrorRps,
        errors,
        ok ? 'passed' : 'failed',
        'measured',
        `failed calls (errors + deadline exceeded) ${rps(errors)} ${ok ? '<=' : '>'} ${rps(expect.maxErrorRps)}`,
      ),
    );
  }
  if (expect.maxRestarts !== undefined) {
    const ok = self.restarts <= expect.maxRestarts;
    out.push(
      result(
        'maxRestarts',
        expect.maxRestarts,
        self.restarts,
        ok ? 'passed' : 'failed',
        'measured',
        `${self.restarts} restart(s) ${ok ? '<=' : '>'} ${expect.maxRestarts}`,
      ),
    );
  }
  if (expect.maxPeakRatio) out.push(ratioCheck('maxPeakRatio', expect.maxPeakRatio, self, all, unshown));
  if (expect.minPeakRatio) out.push(ratioCheck('minPeakRatio', expect.minPeakRatio, self, all, unshown));
  const judged = withBacklog(self, expect.maxRejectionLatency, out);
  return withAgentCpu(self, expect.minAgentCpuCores, withPileUp(self, expect.minInflightAttestations, withIntensity(self, expect.minOfferedRps, judged)));
}

function admittedSuccessCheck(self: VariantResult, min: number): ExpectationResult {
  const admitted = self.okRps + self.deadlineExceededRps + self.errorRps;
  if (admitted <= 0)
    return result(
      'minAdmittedSuccess',
      min,
      null,
      'inconclusive',
      'none',
      'no storm call was admitted (every call was rejected or none was made), so the share served cannot be judged',
    );
  const share = self.okRps / admitted;
  const ok = share >= min;
  const shown = `${(100 * share).toFixed(0)}% of the admitted storm calls succeeded (${rps(self.okRps)} of ${rps(admitted)}; deadline exceeded ${rps(self.deadlineExceededRps)}, errors ${rps(self.errorRps)})`;
  return result('minAdmittedSuccess', min, +share.toFixed(4), ok ? 'passed' : 'failed', 'measured', `${shown} ${ok ? '>=' : '<'} ${(100 * min).toFixed(0)}%`);
}

const pct = (x: number) => `${(100 * x).toFixed(0)}%`;

/** What held the storm back, as measured: generator, agent and machine CPU, load average. */
export function stormConditions(self: VariantResult): string {
  const st = self.storm;
  if (!st) return 'no generator figures recorded';
  const parts = [`${st.startedWorkers} of ${st.offeredWorkers} workers started`];
  if (st.workerCrashes) parts.push(`${st.workerCrashes} crashed`);
  if (st.generatorCpuCores != null)
    parts.push(`generator ${st.generatorCpuCores.toFixed(2)} cores${st.runnerCpuCores != null ? ` (runner ${st.runnerCpuCores.toFixed(2)})` : ''}`);
  else if (st.generatorCpuShare !== null) parts.push(`generator CPU ${pct(st.generatorCpuShare)} of the machine`);
  if (st.agentCpuCores != null) parts.push(`agent ${st.agentCpuCores.toFixed(2)} cores`);
  if (st.machineBusyCores != null) parts.push(`machine ${st.machineBusyCores.toFixed(2)} of ${cpus().length} cores busy`);
  if (st.loadAverage != null) parts.push(`load average ${st.loadAverage.toFixed(1)}`);
  return parts.join(', ');
}

/**
 * The intensity precondition: when the storm offered fewer calls per second than the variant's shape
 * needs, the variant did not show that shape — nothing it measured may fail or pass it. The
 * precondition becomes an inconclusive result naming the numbers, and every other failure is
 * reported as not judged (inconclusive) with its measured text kept.
 */
/** Whether a variant's storm fell short of the intensity its expect block says its shape needs. */
export function stormTooWeak(self: VariantResult, expect: Pick<ExpectInput, 'minOfferedRps' | 'minInflightAttestations'> | undefined): boolean {
  if (!expect || self.error) return false;
  const offered = self.storm?.offeredRps ?? null;
  if (expect.minOfferedRps !== undefined && (offered === null || offered < expect.minOfferedRps)) return true;
  return expect.minInflightAttestations !== undefined && !piledUp(self, expect.minInflightAttestations);
}

/** Why a variant did not show the shape its expect block describes, if it did not: then no ratio to it is judged. */
function shapeUnshown(self: VariantResult, expect: ExpectInput | undefined): string | null {
  if (stormTooWeak(self, expect)) return 'storm too weak';
  return agentFellBehind(self, expect?.maxRejectionLatency) ? 'agent fell behind its storm' : null;
}

/** A precondition that failed: the failures of the rules it underpins (all, or those named) become "not judged", their measured text kept. */
function notJudged(rules: ExpectationResult[], why: string, only?: ReadonlySet<string>): ExpectationResult[] {
  return rules.map((e) =>
    e.verdict === 'failed' && (!only || only.has(e.name)) ? { ...e, verdict: 'inconclusive' as const, message: `not judged (${why}): ${e.message}` } : e,
  );
}

/** An OOM kill under the storm is the pile-up at its limit, whatever the last scrape before it saw. */
const piledUp = (self: VariantResult, min: number) => self.oomKills > 0 || (self.peakInflightAttestations ?? -1) >= min;

function withIntensity(self: VariantResult, minOffered: number | undefined, rules: ExpectationResult[]): ExpectationResult[] {
  if (minOffered === undefined) return rules;
  const offered = self.storm?.offeredRps ?? null;
  // Only judged variants get here (evaluateExpectations returns early on an error), so this is stormTooWeak's rule.
  if (offered !== null && offered >= minOffered) {
    return [
      result('minOfferedRps', minOffered, offered, 'passed', 'measured', `the storm offered ${rps(offered)} >= the ${rps(minOffered)} this shape needs`),
      ...rules,
    ];
  }
  const why =
    offered === null
      ? `the storm's offered rate was not measured (${stormConditions(self)})`
      : `the storm offered ${rps(offered)}, this variant's shape needs >= ${rps(minOffered)}: ${stormConditions(self)}`;
  // The shortfall is named for who caused it: a generator at its CPU limit is not the agent's doing.
  const limit = self.storm?.limitedBy;
  const headline =
    limit?.by === 'generator'
      ? `storm limited by the generator: ${limit.detail}; ${why}`
      : `storm too weak to judge: ${why}${limit ? ` (${limit.by === 'agent' ? 'the agent was at its CPU limit' : 'the machine was at its CPU limit'}: ${limit.detail})` : ''}`;
  const pre = result('minOfferedRps', minOffered, offered, 'inconclusive', offered === null ? 'none' : 'measured', headline);
  const tag = limit?.by === 'generator' ? 'storm limited by the generator' : 'storm too weak';
  return [pre, ...notJudged(rules, tag)];
}

/**
 * The pile-up precondition of a collapsing shape: the agent fell behind, so attestations stacked up.
 * A closed-loop storm offers fewer calls the further the agent collapses (each worker waits out its
 * deadline), so for these shapes the offered rate is no gauge; the attestations in flight at once are.
 */
function withPileUp(self: VariantResult, min: number | undefined, rules: ExpectationResult[]): ExpectationResult[] {
  if (min === undefined) return rules;
  const peak = self.peakInflightAttestations;
  if (piledUp(self, min)) {
    const shown =
      peak !== null && peak >= min
        ? `${peak} attestations in flight at once >= the ${min} this shape needs`
        : `OOM-killed with ${peak ?? 'an unmeasured number of'} attestations in flight at the last reading: the pile-up reached the memory limit`;
    return [result('minInflightAttestations', min, peak, 'passed', peak === null ? 'bound' : 'measured', shown), ...rules];
  }
  const why =
    peak === null
      ? `the attestations in flight were not measured (${stormConditions(self)})`
      : `at most ${peak} attestations in flight at once, this variant's shape needs >= ${min}: the storm offered ${self.storm?.offeredRps != null ? rps(self.storm.offeredRps) : 'an unmeasured rate'}, ${stormConditions(self)}`;
  return [
    result('minInflightAttestations', min, peak, 'inconclusive', peak === null ? 'none' : 'measured', `storm too weak to pile up: ${why}`),
    ...notJudged(rules, 'no pile-up'),
  ];
}

/** The rules that judge what the agent did with the calls it admitted: only an agent that kept up with its storm can be held to them. */
const BACKLOG_RULES = new Set(['minAdmittedSuccess', 'minOkRps', 'maxErrorRps', 'maxPeakRatio', 'minPeakRatio']);

/** Whether the agent fell behind its storm: it rejected nothing, or took longer than maxMs (median) to say no. */
function agentFellBehind(self: VariantResult, maxMs: number | undefined): boolean {
  if (maxMs === undefined || self.error) return false;
  const rejected = self.latency.rateLimited;
  return !rejected?.count || rejected.p50Ms > maxMs;
}

/**
 * The backlog precondition of a limiting shape. A rejection waits on nothing but the agent's own
 * backlog of work, so its latency is how long any call queued in the agent before being looked
 * at; an admitted call queues as long before its attestation even starts. When that alone leaves
 * too little of the call's deadline, the machine's CPU decided whether admitted calls were served,
 * not the limiter: the rules about admitted calls are not judged. Survival, absolute peaks and
 * bystanders are, so a limiter that stopped protecting the agent still fails.
 */
function withBacklog(self: VariantResult, maxMs: number | undefined, rules: ExpectationResult[]): ExpectationResult[] {
  if (maxMs === undefined) return rules;
  const rejected = self.latency.rateLimited;
  const ms = (n: number) => `${Math.round(n)} ms`;
  if (!agentFellBehind(self, maxMs)) {
    const shown = `the agent answered the calls it rejected in ${ms(rejected!.p50Ms)} (median of ${rejected!.count}) <= the ${ms(maxMs)} an admitted call can queue`;
    return [result('maxRejectionLatency', maxMs, rejected!.p50Ms, 'passed', 'measured', shown), ...rules];
  }
  const why = rejected?.count
    ? `it took ${ms(rejected.p50Ms)} (median of ${rejected.count}) to answer the calls it rejected, more than the ${ms(maxMs)} an admitted call can queue and still meet its deadline: this machine's CPU, not the limiter, decided whether admitted calls were served (${stormConditions(self)})`
    : `no storm call was rejected, so how long calls queued in the agent is unknown (${stormConditions(self)})`;
  return [
    result(
      'maxRejectionLatency',
      maxMs,
      rejected?.count ? rejected.p50Ms : null,
      'inconclusive',
      rejected?.count ? 'measured' : 'none',
      `agent fell behind its storm: ${why}`,
    ),
    ...notJudged(rules, 'agent fell behind its storm', BACKLOG_RULES),
  ];
}

/** A machine counts as saturated at this share of its cores busy. */
const SATURATED_MACHINE = 0.95;

/**
 * The agent's CPU precondition: on a saturated machine, an agent that got less CPU than its shape
 * needs was starved by its neighbours — what it measured may not fail. On a machine with CPU to
 * spare the rules stand (an agent that idles on a free machine has a problem of its own).
 */
function withAgentCpu(self: VariantResult, minCores: number | undefined, rules: ExpectationResult[]): ExpectationResult[] {
  if (minCores === undefined) return rules;
  const agent = self.storm?.agentCpuCores ?? null;
  const busy = self.storm?.machineBusyCores ?? null;
  // Under a CPU budget (--cpu-budget, a container's quota) the run's share is what can be saturated.
  const cores = Math.min(cpus().length, cpuQuotaCores() ?? Infinity);
  if (agent === null)
    return [
      result(
        'minAgentCpuCores',
        minCores,
        null,
        'inconclusive',
        'none',
        `the agent's CPU was not measured, so whether it got the ${minCores} cores its shape needs is unknown`,
      ),
      ...rules,
    ];
  if (agent >= minCores)
    return [
      result('minAgentCpuCores', minCores, agent, 'passed', 'measured', `the agent got ${agent.toFixed(2)} cores >= the ${minCores} this shape needs`),
      ...rules,
    ];
  if (busy === null || busy < SATURATED_MACHINE * cores) {
    return [
      result(
        'minAgentCpuCores',
        minCores,
        agent,
        'passed',
        'measured',
        `the agent got ${agent.toFixed(2)} cores (< ${minCores}) with ${busy === null ? 'an unmeasured share' : `${busy.toFixed(2)} of ${+cores.toFixed(2)}`} cores busy: CPU was there to take, its rules are judged`,
      ),
      ...rules,
    ];
  }
  const why = `the agent got ${agent.toFixed(2)} cores, this shape needs >= ${minCores}, on a saturated machine (${stormConditions(self)})`;
  return [
    result('minAgentCpuCores', minCores, agent, 'inconclusive', 'measured', `agent starved by its neighbours: ${why}`),
    ...notJudged(rules, 'agent starved'),
  ];
}

/** The verdict of a set of expectations: any failure fails; else any inconclusive; else passed. */
export function combineVerdicts(verdicts: readonly Verdict[]): Verdict {
  if (verdicts.includes('failed')) return 'failed';
  if (verdicts.includes('inconclusive')) return 'inconclusive';
  return 'passed';
}

/**
 * Fills `expectations`, `verdict` and `passed` of every variant (ratios need all of them measured
 * first) and returns the run's verdict. `failOnInconclusive` turns inconclusive into a failure.
 */
export function applyExpectations(variants: VariantResult[], expect: Partial<Record<string, ExpectInput>>, failOnInconclusive = false): Verdict {
  const unshown = new Map<string, string>();
  for (const v of variants) {
    const why = shapeUnshown(v, expect[v.name]);
    if (why) unshown.set(v.name, why);
  }
  for (const v of variants) {
    v.expectations = evaluateExpectations(v, expect[v.name], variants, unshown);
    v.verdict = v.error ? 'failed' : combineVerdicts(v.expectations.map((e) => e.verdict));
    v.passed = v.verdict === 'passed' || (v.verdict === 'inconclusive' && !failOnInconclusive);
  }
  if (!variants.length) return 'inconclusive';
  return combineVerdicts(variants.map((v) => v.verdict));
}
