// The preconditions of a variant's verdict: whether its storm showed the shape its rules describe
// (the storm's offered rate, the attestations piled up), whether its agent kept up with the storm
// (the rejections' latency) and got the CPU its shape needs. A precondition that fails makes the
// failures of the rules it underpins "not judged" (inconclusive), their measured text kept.
import { cpuQuotaCores } from '../cgroup/index.js';
import type { ExpectationResult, VariantResult } from '../contract/index.js';
import { cpus } from 'node:os';
import { result, rps } from './expectation-result.js';
import type { ExpectInput } from './schema.js';

const pct = (x: number) => `${(100 * x).toFixed(0)}%`;

/** What held the storm back, as measured: generator, agent and machine CPU, load average. */
function stormConditions(self: VariantResult): string {
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

/** Whether a variant's storm fell short of the intensity its expect block says its shape needs. */
function stormTooWeak(self: VariantResult, expect: Pick<ExpectInput, 'minOfferedRps' | 'minInflightAttestations' | 'minOpenConnections'> | undefined): boolean {
  if (!expect || self.error) return false;
  const offered = self.storm?.offeredRps ?? null;
  if (expect.minOfferedRps !== undefined && (offered === null || offered < expect.minOfferedRps)) return true;
  if (expect.minOpenConnections !== undefined && !reached(self, expect.minOpenConnections)) return true;
  return expect.minInflightAttestations !== undefined && !piledUp(self, expect.minInflightAttestations);
}

/** Why a variant did not show the shape its expect block describes, if it did not: then no ratio to it is judged. */
export function shapeUnshown(self: VariantResult, expect: ExpectInput | undefined): string | null {
  if (stormTooWeak(self, expect)) return 'storm too weak';
  return agentFellBehind(self, expect?.maxRejectionLatency) ? 'agent fell behind its storm' : null;
}

/** A precondition that failed: the failures of the rules it underpins (all, or those named) become "not judged", their measured text kept. */
function notJudged(rules: ExpectationResult[], why: string, only?: ReadonlySet<string>): ExpectationResult[] {
  return rules.map((e) =>
    e.verdict === 'failed' && (!only || only.has(e.name)) ? { ...e, verdict: 'inconclusive' as const, message: `not judged (${why}): ${e.message}` } : e,
  );
}

/** The storm reached the agent: it held this many connections at once. */
const reached = (self: VariantResult, min: number) => (self.agentPeaks?.openConnections ?? -1) >= min;

/** An OOM kill under the storm is the pile-up at its limit, whatever the last scrape before it saw. */
const piledUp = (self: VariantResult, min: number) => self.oomKills > 0 || (self.peakInflightAttestations ?? -1) >= min;

/**
 * The intensity precondition: when the storm offered fewer calls per second than the variant's shape
 * needs, the variant did not show that shape — nothing it measured may fail or pass it. The
 * precondition becomes an inconclusive result naming the numbers, and every other failure is
 * reported as not judged (inconclusive) with its measured text kept.
 */
export function withIntensity(self: VariantResult, minOffered: number | undefined, rules: ExpectationResult[]): ExpectationResult[] {
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
export function withPileUp(self: VariantResult, min: number | undefined, rules: ExpectationResult[]): ExpectationResult[] {
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

/**
 * The reach precondition of a storm whose workers wait for their answers: each holds one connection
 * while it waits, so the connections the agent held at once say whether the storm reached it at
 * full size. The offered rate cannot: it is set by how fast the agent answers.
 */
export function withReach(self: VariantResult, min: number | undefined, rules: ExpectationResult[]): ExpectationResult[] {
  if (min === undefined) return rules;
  const peak = self.agentPeaks?.openConnections ?? null;
  if (reached(self, min)) {
    return [
      result('minOpenConnections', min, peak, 'passed', 'measured', `the agent held ${peak} connections at once >= the ${min} this shape needs`),
      ...rules,
    ];
  }
  const why =
    peak === null
      ? `the agent's open connections were not measured (${stormConditions(self)})`
      : `the agent held at most ${peak} connections at once, this variant's shape needs >= ${min}: ${stormConditions(self)}`;
  return [
    result('minOpenConnections', min, peak, 'inconclusive', peak === null ? 'none' : 'measured', `storm did not reach the agent at full size: ${why}`),
    ...notJudged(rules, 'storm did not reach the agent'),
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
export function withBacklog(self: VariantResult, maxMs: number | undefined, rules: ExpectationResult[]): ExpectationResult[] {
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
export function withAgentCpu(self: VariantResult, minCores: number | undefined, rules: ExpectationResult[]): ExpectationResult[] {
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
