// Evaluating a scenario's `expect` block against the aggregated variant results. Each rule gives
// one ExpectationResult: passed, failed, or inconclusive. An OOM-killed agent's recorded peak is the
// kernel's high-water mark at its limit, so its true demand is only known to be at least that: a
// bound. A bound that decides a rule passes or fails it; one that cannot decide it is inconclusive.
// Peaks are in the scenario's memoryMeasure (working set by default), named so in every message.
import { MEASURE_WORDS, type ExpectationResult, type Verdict, type VariantResult } from '../contract/index.js';
import { evaluateBystanderExpectations } from '../load/index.js';
import { formatMiB, parseBytes } from '../util/index.js';
import { failedCallChecks } from './calls-failed.js';
import { result, rps } from './expectation-result.js';
import { shapeUnshown, withAgentCpu, withBacklog, withIntensity, withPileUp, withReach } from './preconditions.js';
import type { ExpectInput } from './schema.js';

type Ratio = { to: string; value: number };

const mib = (b: number) => formatMiB(b);

/** A peak is exact unless the agent was OOM-killed: then it only bounds the demand from below. */
const isBound = (p: Pick<VariantResult, 'oomKills'>) => p.oomKills > 0;
/** "peak working set": what the figure is, as the scenario's memoryMeasure chose it. */
const peakName = (p: Pick<VariantResult, 'memoryMeasure'>) => `peak ${MEASURE_WORDS[p.memoryMeasure]}`;
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
      `${self.peakMemoryBytes === null ? 'this variant' : r.to}'s ${peakName(self)} is unmeasured in this run, so the ratio cannot be judged`,
    );
  }
  if (other.peakMemoryBytes <= 0)
    return result(kind, r, null, 'failed', 'none', `${r.to} has no ${peakName(self)} to compare with (its memory was not sampled)`);
  const ratio = self.peakMemoryBytes / other.peakMemoryBytes;
  const actual = +ratio.toFixed(4);
  const shown = `${ratio.toFixed(2)}× ${r.to} (${peakText(self)} / ${peakText(other)})`;
  const peak = peakName(self);
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
        `${peak} ${shown} <= ${r.value}×${otherBound ? ` (${r.to}'s true peak is at least its recorded one, so this holds)` : ''}`,
      );
    if (!otherBound && ratio > r.value)
      return result(kind, r, actual, 'failed', basis, `${peak} ${shown} > ${r.value}×${selfBound ? ' (and its true peak is higher still)' : ''}`);
    return result(
      kind,
      r,
      actual,
      'inconclusive',
      basis,
      `${peak} ${shown}: cannot tell whether <= ${r.value}× — ${selfBound ? 'this variant' : r.to} was OOM-killed, so its true peak is unknown (run it unconstrained to measure it)`,
    );
  }
  // minPeakRatio: self_true ≥ v × other_true?
  if (!otherBound && ratio >= r.value)
    return result(kind, r, actual, 'passed', basis, `${peak} ${shown} >= ${r.value}×${selfBound ? ' (its true peak is higher still)' : ''}`);
  if (!selfBound && ratio < r.value)
    return result(kind, r, actual, 'failed', basis, `${peak} ${shown} < ${r.value}×${otherBound ? ` (and ${r.to}'s true peak is higher still)` : ''}`);
  return result(
    kind,
    r,
    actual,
    'inconclusive',
    basis,
    `${peak} ${shown}: cannot tell whether >= ${r.value}× — ${otherBound ? r.to : 'this variant'} was OOM-killed, so its true peak is unknown (run it unconstrained to measure it)`,
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
  out.push(...memoryChecks(self, expect), ...pressureChecks(self, expect), ...callChecks(self, expect));
  if (expect.maxPeakRatio) out.push(ratioCheck('maxPeakRatio', expect.maxPeakRatio, self, all, unshown));
  if (expect.minPeakRatio) out.push(ratioCheck('minPeakRatio', expect.minPeakRatio, self, all, unshown));
  const judged = withBacklog(self, expect.maxRejectionLatency, out);
  const intense = withReach(self, expect.minOpenConnections, withIntensity(self, expect.minOfferedRps, judged));
  return withAgentCpu(self, expect.minAgentCpuCores, withPileUp(self, expect.minInflightAttestations, intense));
}

/** Time near the limit and memory stalls, judged on the worst repetition. */
function pressureChecks(self: VariantResult, expect: ExpectInput): ExpectationResult[] {
  const out: ExpectationResult[] = [];
  const reps = self.memoryPressure ?? [];
  if (expect.maxTimeNearLimit !== undefined) {
    const max = expect.maxTimeNearLimit;
    const shares = reps.filter((p) => p.stormSeconds > 0).map((p) => ({ p, share: p.nearLimitSeconds / p.stormSeconds }));
    if (!shares.length)
      out.push(result('maxTimeNearLimit', max, null, 'inconclusive', 'none', 'time near the limit unmeasured: no memory readings over the storm'));
    else {
      const worst = shares.reduce((a, b) => (b.share > a.share ? b : a));
      const ok = worst.share <= max;
      out.push(
        result(
          'maxTimeNearLimit',
          max,
          +worst.share.toFixed(4),
          ok ? 'passed' : 'failed',
          'measured',
          `${pct(worst.share)} of the storm at >= 95% of the limit (${worst.p.nearLimitSeconds.toFixed(1)} s of ${worst.p.stormSeconds.toFixed(0)} s${reps.length > 1 ? `, r${worst.p.rep}` : ''}) ${ok ? '<=' : '>'} ${pct(max)}`,
        ),
      );
    }
  }
  if (expect.maxMemoryStall !== undefined) {
    const max = expect.maxMemoryStall;
    const stalls = reps.filter((p) => p.stallSome !== null);
    if (!stalls.length)
      out.push(
        result('maxMemoryStall', max, null, 'inconclusive', 'none', 'memory stalls unmeasured: PSI (memory.pressure) needs cgroup v2 with pressure accounting'),
      );
    else {
      const worst = stalls.reduce((a, b) => (b.stallSome! > a.stallSome! ? b : a));
      const ok = worst.stallSome! <= max;
      out.push(
        result(
          'maxMemoryStall',
          max,
          worst.stallSome,
          ok ? 'passed' : 'failed',
          'measured',
          `tasks stalled on memory ${pct(worst.stallSome!)} of the storm${reps.length > 1 ? ` (r${worst.rep})` : ''} ${ok ? '<=' : '>'} ${pct(max)}`,
        ),
      );
    }
  }
  return out;
}

const pct = (x: number) => `${(100 * x).toFixed(x < 0.1 ? 1 : 0)}%`;

/** The agent's survival and its peak memory against absolute bounds. */
function memoryChecks(self: VariantResult, expect: ExpectInput): ExpectationResult[] {
  const out: ExpectationResult[] = [];
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
  const name = peakName(self);
  if (peak === null) {
    for (const key of ['maxPeakMemory', 'minPeakMemory'] as const) {
      if (expect[key] !== undefined)
        out.push(result(key, expect[key], null, 'inconclusive', 'none', `${peakName(self)} unmeasured: nothing could read the agent's memory in this run`));
    }
  } else if (expect.maxPeakMemory !== undefined) {
    const limit = parseBytes(expect.maxPeakMemory)!;
    const over = peak > limit;
    const verdict: Verdict = over ? 'failed' : isBound(self) ? 'inconclusive' : 'passed';
    const msg = over
      ? `${name} ${peakText(self)} > ${mib(limit)}`
      : isBound(self)
        ? `${name} ${peakText(self)}: the true peak may exceed ${mib(limit)}`
        : `${name} ${mib(peak)} <= ${mib(limit)}`;
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
        `${name} ${peakText(self)} ${ok ? '>=' : '<'} ${mib(min)}`,
      ),
    );
  }
  return out;
}

/** What the storm's calls got: served, failed, and the agent's restarts. */
function callChecks(self: VariantResult, expect: ExpectInput): ExpectationResult[] {
  const out: ExpectationResult[] = [];
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
  return out;
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
    v.expectations = v.notJudged
      ? Object.entries(expect[v.name] ?? {}).map(([key, want]) => result(key, want, null, 'inconclusive', 'none', `not judged: ${v.notJudged}`))
      : [...evaluateExpectations(v, expect[v.name], variants, unshown), ...failedCallChecks(v)];
    v.verdict = v.error ? 'failed' : v.notJudged ? 'inconclusive' : combineVerdicts(v.expectations.map((e) => e.verdict));
    v.passed = v.verdict === 'passed' || (v.verdict === 'inconclusive' && !failOnInconclusive);
  }
  if (!variants.length) return 'inconclusive';
  return combineVerdicts(variants.map((v) => v.verdict));
}
