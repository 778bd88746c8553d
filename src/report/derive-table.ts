// The comparison table and the verdict line: one row per placement, in the brief's shape, and the
// sentence that says which placements survived and how their peaks compare with the unlimited agent.
import type { PlacementName, PlacementResult, RunResults } from '../scenario/index.js';
import type { TableRow, Verdict } from './report-model.js';

const MiB = 2 ** 20;

/** The field's reported ratios (brief §2): pre/disabled ≈ 0.41, post/disabled ≈ 0.90. */
export const FIELD_RATIOS = { preToDisabled: 0.41, postToDisabled: 0.9 } as const;

export function deriveRows(run: string, results: RunResults): TableRow[] {
  return results.placements.map((p) => deriveRow(run, p));
}

function deriveRow(run: string, p: PlacementResult): TableRow {
  const limited = Number.isFinite(p.memoryLimitBytes) && p.memoryLimitBytes > 0;
  const expectations = (p.expectations ?? []).map((e) => ({ name: e.name, passed: e.passed, message: e.message }));
  const ok = p.latency?.ok;
  return {
    run,
    placement: p.name,
    memoryLimitMiB: limited ? p.memoryLimitBytes / MiB : null,
    peakMemoryMiB: p.peakMemoryBytes / MiB,
    peakPercentOfLimit: limited ? (100 * p.peakMemoryBytes) / p.memoryLimitBytes : null,
    oomKills: p.oomKills,
    restarts: p.restarts,
    downtimeSeconds: p.downtimeSeconds,
    okRps: p.okRps,
    rejectedRps: p.rejectedRps,
    errorRps: p.errorRps,
    deadlineExceededRps: p.deadlineExceededRps,
    okP50Ms: ok ? ok.p50Ms : null,
    okP99Ms: ok ? ok.p99Ms : null,
    peakInflightAttestations: p.peakInflightAttestations,
    expectationsPassed: expectations.filter((e) => e.passed).length,
    expectationsFailed: expectations.filter((e) => !e.passed).length,
    expectations,
    passed: p.passed,
    error: p.error ?? null,
  };
}

export function deriveVerdict(rows: TableRow[], results: RunResults): Verdict {
  const notRun = rows.filter((r) => r.error !== null).map((r) => r.placement);
  const ran = rows.filter((r) => r.error === null);
  const oomKilled = ran.filter((r) => r.oomKills > 0).map((r) => r.placement);
  const survived = ran.filter((r) => r.oomKills === 0).map((r) => r.placement);

  const byName = (name: PlacementName) => ran.find((r) => r.placement === name);
  const disabled = byName('disabled');
  const ratio = (name: PlacementName): number | null => {
    const row = byName(name);
    if (!row || !disabled || disabled.peakMemoryMiB <= 0) return null;
    return row.peakMemoryMiB / disabled.peakMemoryMiB;
  };
  const ratios = {
    preToDisabled: ratio('pre-attestation'),
    postToDisabled: ratio('post-attestation'),
    disabledCapped: !!disabled && disabled.oomKills > 0,
  };
  const expectationsPassed = results.passed && rows.every((r) => r.passed);

  const parts: string[] = [];
  for (const row of rows) parts.push(describeRow(row));
  let text = `${parts.join('; ')}.`;
  const ratioText: string[] = [];
  if (ratios.preToDisabled !== null) {
    ratioText.push(`pre/disabled ${ratios.preToDisabled.toFixed(2)} (field ≈${FIELD_RATIOS.preToDisabled.toFixed(2)})`);
  }
  if (ratios.postToDisabled !== null) {
    ratioText.push(`post/disabled ${ratios.postToDisabled.toFixed(2)} (field ≈${FIELD_RATIOS.postToDisabled.toFixed(2)})`);
  }
  if (ratioText.length > 0) {
    text += ` Peak memory ratios: ${ratioText.join(', ')}`;
    // An OOM-killed agent never got to show its true peak, so dividing by it overstates the ratio.
    text += ratios.disabledCapped ? ' — disabled was OOM-killed, so its peak is capped by the limit and these are upper bounds.' : '.';
  }
  const failed = rows.reduce((n, r) => n + r.expectationsFailed, 0);
  text += expectationsPassed ? ' All expectations met.' : ` Expectations not met (${failed} failed).`;
  if (results.status !== 'complete') text += ` The run is ${results.status}; figures cover what was recorded.`;
  return { text, survived, oomKilled, notRun, ratios, fieldRatios: { ...FIELD_RATIOS }, expectationsPassed };
}

function describeRow(row: TableRow): string {
  if (row.error !== null) return `${row.placement} could not run (${row.error})`;
  const peak = `peak ${row.peakMemoryMiB.toFixed(1)} MiB`;
  const ofLimit =
    row.memoryLimitMiB !== null && row.peakPercentOfLimit !== null
      ? `, ${Math.round(row.peakPercentOfLimit)}% of ${formatLimit(row.memoryLimitMiB)}`
      : '';
  if (row.oomKills === 0) return `${row.placement} survived (${peak}${ofLimit})`;
  const times = row.oomKills === 1 ? 'once' : `${row.oomKills} times`;
  return `${row.placement} OOM-killed ${times} (${peak}${ofLimit})`;
}

export function formatLimit(mib: number): string {
  return Number.isInteger(mib) ? `${mib} MiB` : `${mib.toFixed(1)} MiB`;
}
