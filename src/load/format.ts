// Human renderings of a load run for stderr: the live one-line status and the final table.
import type { LoadSample, Outcome } from '../contract/index.js';
import type { BystanderRun, LoadSampleWithBystanders } from './bystanders-summary.js';
import { summarizeHistogram, mergeEncodedHistograms } from './histograms.js';
import type { LoadSummary } from './run-load.js';

const OUTCOME_LABEL: Record<Outcome, string> = { ok: 'ok', rateLimited: 'rate-limited', deadlineExceeded: 'deadline exceeded', error: 'error' };

function n(x: number, digits = 0): string {
  return x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

/** "t=12s  ok 812/s  rejected 95/s  errors 3/s  p99 14.2 ms" for one second's sample. */
export function formatStatusLine(s: LoadSample | LoadSampleWithBystanders): string {
  const all = (['ok', 'rateLimited', 'deadlineExceeded', 'error'] as const).map((o) => s.histograms[o]).filter((h): h is string => !!h);
  const p99 = all.length ? `${n(summarizeHistogram(mergeEncodedHistograms(all)).p99Ms, 1)} ms` : '-';
  const b = 'bystanders' in s ? s.bystanders : undefined;
  const bys = b ? `  bystanders ok ${n(b.ok)}/${n(b.ok + b.rateLimited + b.deadlineExceeded + b.error)}` : '';
  return `t=${Math.round(s.t / 1000) + 1}s  ok ${n(s.ok)}/s  rejected ${n(s.rateLimited)}/s  errors ${n(s.error + s.deadlineExceeded)}/s  p99 ${p99}${bys}`;
}

/** "bystanders: 24 calls from 2 workers in 1 pod, 100.0% ok, p50 36.0 ms, p99 322 ms, longest gap 0.57 s; OK 24". */
export function formatBystanderLine(b: BystanderRun): string {
  const s = b.summary;
  const pods = Object.keys(b.pods).length;
  const latency = s.p50Ms === null ? 'no successful call' : `p50 ${n(s.p50Ms, 1)} ms, p99 ${n(s.p99Ms!, 1)} ms`;
  const codes = Object.entries(s.byStatus)
    .sort((a, c) => c[1] - a[1])
    .map(([c, k]) => `${c} ${n(k)}`)
    .join(', ');
  return `bystanders: ${n(s.calls)} calls from ${b.workers} workers in ${pods} pod${pods === 1 ? '' : 's'}, ${n(s.successRatio * 100, 1)}% ok, ${latency}, longest gap ${n(s.longestGapMs / 1000, 2)} s${codes ? `; ${codes}` : ''}`;
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ')).join('\n');
}

export function formatSummaryTable(s: LoadSummary): string {
  const lines: string[] = [];
  const secs = s.durationMs / 1000;
  lines.push(
    `load: ${n(s.totals.calls)} calls in ${n(secs, 1)} s from ${s.workers} workers in ${Object.keys(s.pods).length} pods${s.client ? ` (client ${s.client})` : ''}${s.aborted ? ' (aborted)' : ''}`,
  );
  const rows: string[][] = [['outcome', 'calls', 'calls/s', 'p50 ms', 'p90 ms', 'p99 ms', 'p99.9 ms', 'max ms']];
  for (const o of ['ok', 'rateLimited', 'deadlineExceeded', 'error'] as const) {
    const count = s.totals[o];
    const l = s.latency[o];
    rows.push([
      OUTCOME_LABEL[o],
      n(count),
      n(count / secs, 1),
      ...(l ? [l.p50Ms, l.p90Ms, l.p99Ms, l.p999Ms, l.maxMs].map((v) => n(v, 2)) : ['-', '-', '-', '-', '-']),
    ]);
  }
  lines.push(table(rows));
  const codes = Object.entries(s.totals.byCode).sort((a, b) => b[1] - a[1]);
  if (codes.length) lines.push(`status codes: ${codes.map(([c, k]) => `${c} ${n(k)}`).join(', ')}`);
  const podRows: string[][] = [['pod', 'ok', 'rate-limited', 'errors']];
  for (const p of Object.values(s.pods)) podRows.push([p.name, n(p.ok), n(p.rateLimited), n(p.error)]);
  if (podRows.length > 1 && podRows.length <= 21) lines.push(table(podRows));
  if (s.workerMemoryBytes) {
    const m = s.workerMemoryBytes;
    lines.push(`worker memory (PSS): median ${(m.median / 2 ** 20).toFixed(1)} MiB, max ${(m.max / 2 ** 20).toFixed(1)} MiB over ${m.samples} workers`);
  }
  if (s.bystanders) lines.push(formatBystanderLine(s.bystanders));
  return lines.join('\n') + '\n';
}
