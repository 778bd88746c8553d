// The comparison table and the verdict line: one row per variant, in the brief's shape, and the
// sentence that says which variants survived and how their peaks compare with the unlimited agent.
import { judgementOf, judgementSentence, MEASURE_WORDS, type RunResults, type VariantResult } from '../contract/index.js';
import { bystandersServedSentence } from '../load/index.js';
import { worstPressure } from '../scenario/index.js';

import type { TableRow, Verdict } from './report-model.js';

const MiB = 2 ** 20;

/** The ratios published load tests of the two placements reported: pre/disabled ≈ 0.41, post/disabled ≈ 0.90. */
export const FIELD_RATIOS = { preToDisabled: 0.41, postToDisabled: 0.9 } as const;

export function deriveRows(run: string, results: RunResults): TableRow[] {
  return results.variants.map((v) => deriveRow(run, v));
}

function deriveRow(run: string, v: VariantResult): TableRow {
  const limited = Number.isFinite(v.memoryLimitBytes) && v.memoryLimitBytes > 0;
  const expectations = (v.expectations ?? []).map((e) => ({ name: e.name, verdict: e.verdict, message: e.message }));
  const ok = v.latency?.ok;
  const spread = v.spread?.peakMemoryBytes;
  return {
    run,
    variant: v.name,
    atLimit: v.atLimit ?? null,
    nearLimit: worstPressure(v.memoryPressure),
    agent: v.agent,
    memoryLimitMiB: limited ? v.memoryLimitBytes / MiB : null,
    memoryMeasure: v.memoryMeasure,
    peakMemoryMiB: v.peakMemoryBytes === null ? null : v.peakMemoryBytes / MiB,
    peakUsageMiB: v.memoryMeasure !== 'usage' && v.peaks.usageBytes !== null ? v.peaks.usageBytes / MiB : null,
    peakRangeMiB: spread && v.runDirs.length > 1 ? { min: spread.min / MiB, max: spread.max / MiB } : null,
    workingSetParts: v.peaks?.workingSetParts ?? null,
    repetitions: v.runDirs.length,
    deathPhases: (v.deaths ?? []).map((d) => d.phase),
    peakPercentOfLimit: limited && v.peakMemoryBytes !== null ? (100 * v.peakMemoryBytes) / v.memoryLimitBytes : null,
    oomKills: v.oomKills,
    restarts: v.restarts,
    downtimeSeconds: v.downtimeSeconds,
    okRps: v.okRps,
    rejectedRps: v.rejectedRps,
    errorRps: v.errorRps,
    deadlineExceededRps: v.deadlineExceededRps,
    okP50Ms: ok ? ok.p50Ms : null,
    okP99Ms: ok ? ok.p99Ms : null,
    peakInflightAttestations: v.peakInflightAttestations,
    peakOpenConnections: v.agentPeaks?.openConnections ?? null,
    offeredRps: v.storm?.offeredRps ?? null,
    deliveredRps: v.storm?.deliveredRps ?? null,
    generatorCpuShare: v.storm?.generatorCpuShare ?? null,
    stormShrank: v.storm?.shrank ?? null,
    seriesLate: v.storm?.late ?? null,
    loadClient: v.loadClient ?? null,
    bystanders:
      v.bystanders && v.bystanders.calls > 0
        ? { successRatio: v.bystanders.successRatio, calls: v.bystanders.calls, p99Ms: v.bystanders.p99Ms, longestGapMs: v.bystanders.longestGapMs }
        : null,
    expectationsPassed: expectations.filter((e) => e.verdict === 'passed').length,
    expectationsFailed: expectations.filter((e) => e.verdict === 'failed').length,
    expectationsInconclusive: expectations.filter((e) => e.verdict === 'inconclusive').length,
    expectations,
    passed: v.passed,
    // A variant the machine could not start in time is shown as not run, saying why: it was never measured.
    error: v.error ?? (v.notJudged ? `not judged: ${v.notJudged}` : null),
  };
}

/** The rules calls-failed.ts adds to every variant. */
const FAILED_CALL_RULES = new Set(['stormCalls', 'bystanderCalls']);

export function deriveVerdict(rows: TableRow[], results: RunResults): Verdict {
  const notRun = rows.filter((r) => r.error !== null).map((r) => r.variant);
  const ran = rows.filter((r) => r.error === null);
  const oomKilled = ran.filter((r) => r.oomKills > 0).map((r) => r.variant);
  const survived = ran.filter((r) => r.oomKills === 0).map((r) => r.variant);

  // The brief's ratios are between the reference agent's placements; the first variant of each counts.
  const reference = ran.filter((r) => r.agent.kind === 'reference');
  const byPlacement = (p: string) => reference.find((r) => r.agent.placement === p);
  // The unlimited agent's measured peak (one that was not OOM-killed) is the honest denominator.
  const disabledRows = reference.filter((r) => r.agent.placement === 'disabled');
  const disabled = disabledRows.find((r) => r.oomKills === 0) ?? disabledRows[0];
  const ratio = (p: string): number | null => {
    const row = byPlacement(p);
    if (!row || !disabled || row.peakMemoryMiB === null || disabled.peakMemoryMiB === null || disabled.peakMemoryMiB <= 0) return null;
    return row.peakMemoryMiB / disabled.peakMemoryMiB;
  };
  const ratios = {
    preToDisabled: ratio('pre-attestation'),
    postToDisabled: ratio('post-attestation'),
    disabledCapped: !!disabled && disabled.oomKills > 0,
  };
  const runVerdict = results.verdict;
  const expectationsPassed = results.passed;

  const parts: string[] = [];
  for (const row of rows) parts.push(describeRow(row));
  // What the limiter is for leads: whether the innocent pods beside the storm kept getting identities.
  const served = bystandersServedSentence(results.variants);
  let text = `${served ? `${served[0]!.toUpperCase()}${served.slice(1)}. ` : ''}${parts.join('; ')}.`;
  // Calls that failed while the agent stayed up: the cause comes before any figure.
  const causes = results.variants.flatMap((v) =>
    v.expectations.filter((e) => FAILED_CALL_RULES.has(e.name) && e.verdict === 'failed').map((e) => `${v.name}: ${e.message}`),
  );
  if (causes.length) text += ` Failed calls: ${causes.join('; ')}.`;
  const ratioText: string[] = [];
  if (ratios.preToDisabled !== null)
    ratioText.push(`pre/disabled ${ratios.preToDisabled.toFixed(2)} (published load tests ≈${FIELD_RATIOS.preToDisabled.toFixed(2)})`);
  if (ratios.postToDisabled !== null)
    ratioText.push(`post/disabled ${ratios.postToDisabled.toFixed(2)} (published load tests ≈${FIELD_RATIOS.postToDisabled.toFixed(2)})`);
  if (ratioText.length > 0) {
    text += ` Peak ${MEASURE_WORDS[disabled!.memoryMeasure]} ratios (to ${disabled!.variant}): ${ratioText.join(', ')}`;
    // An OOM-killed agent never got to show its true peak: dividing by its limit overstates the ratio.
    text += ratios.disabledCapped
      ? ` — disabled was OOM-killed, so its true peak is unknown (at least its limit): these ratios are upper bounds, not measurements, and are not comparable with the published ones.`
      : '.';
  }
  const failed = rows.reduce((n, r) => n + r.expectationsFailed, 0);
  const inconclusive = rows.reduce((n, r) => n + r.expectationsInconclusive, 0);
  const judgement = results.judgement ?? judgementOf(results.variants, results.droppedExpectations);
  // What was judged is said every time: a verdict over no rule is a comparison, never a pass.
  if (runVerdict === 'compared') text += ' Compared, not judged:';
  else if (runVerdict === 'passed') text += judgement.dropped.length || judgement.undecided ? ' Every judged expectation met:' : ' All expectations met:';
  else if (runVerdict === 'inconclusive') text += ` No expectation failed, ${inconclusive} inconclusive:`;
  else text += ` Expectations not met (${failed} failed${inconclusive ? `, ${inconclusive} inconclusive` : ''}):`;
  text += ` ${judgementSentence(judgement)}`;
  const shrank = rows.filter((r) => r.stormShrank).map((r) => `${r.variant} (${r.stormShrank})`);
  if (shrank.length) text += ` The storm shrank for ${shrank.join(', ')}: those figures understate the load.`;
  const fellBack = rows.filter((r) => r.loadClient && r.loadClient.ran !== r.loadClient.requested);
  if (fellBack.length) text += ` ${clientSentence(fellBack)}`;
  const late = rows.filter((r) => r.seriesLate).map((r) => `${r.variant} (${r.seriesLate})`);
  if (late.length)
    text += ` The generator fell behind for ${late.join(', ')}: the per-second rate charts bunch those calls; totals and rates in the table are exact.`;
  if (results.status !== 'complete')
    text += ` The run is ${results.status}${results.statusDetail ? ` (${results.statusDetail})` : ''}; figures cover only what was recorded, and it cannot pass.`;
  return { text, survived, oomKilled, notRun, ratios, fieldRatios: { ...FIELD_RATIOS }, expectationsPassed, runVerdict, judgement };
}

/** Workers that ran another client than asked for: their memory and CPU per worker are that client's. */
function clientSentence(rows: TableRow[]): string {
  const c = rows[0]!.loadClient!;
  const reasons = [...new Set(rows.map((r) => r.loadClient!.reason).filter(Boolean))];
  return `The storm's workers ran the ${c.ran} client, not ${c.requested} as asked, for ${rows.map((r) => r.variant).join(', ')}${
    reasons.length ? ` (${reasons.join('; ')})` : ''
  }: worker memory and calls per CPU-second are ${c.ran}'s.`;
}

function describeRow(row: TableRow): string {
  if (row.error !== null) return `${row.variant} could not run (${row.error})`;
  const words = MEASURE_WORDS[row.memoryMeasure];
  const peak = row.peakMemoryMiB === null ? `peak ${words} unmeasured` : `peak ${words} ${row.oomKills > 0 ? '≥ ' : ''}${row.peakMemoryMiB.toFixed(1)} MiB`;
  const ofLimit =
    row.memoryLimitMiB !== null && row.peakPercentOfLimit !== null ? `, ${Math.round(row.peakPercentOfLimit)}% of ${formatLimit(row.memoryLimitMiB)}` : '';
  const usage = row.peakUsageMiB !== null ? `; usage ${row.peakUsageMiB.toFixed(1)} MiB` : '';
  if (row.oomKills === 0) return `${row.variant} survived${row.atLimit ? ` at its limit (${row.atLimit})` : ''} (${peak}${ofLimit}${usage})`;
  const times = row.oomKills === 1 ? 'once' : `${row.oomKills} times`;
  const phases = [...new Set(row.deathPhases)];
  const during = phases.length && !(phases.length === 1 && phases[0] === 'load') ? `, during ${phases.join(', ')}` : '';
  return `${row.variant} OOM-killed ${times} (${peak}${ofLimit}${during})`;
}

export function formatLimit(mib: number): string {
  if (mib >= 1024 && Number.isInteger(mib / 1024)) return `${mib / 1024} GiB`;
  return Number.isInteger(mib) ? `${mib} MiB` : `${mib.toFixed(1)} MiB`;
}
