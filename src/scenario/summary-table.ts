// The end-of-run comparison on stderr, in the shape of the brief's table: one row per placement.
import type { PlacementResult, RunResults } from './results.js';

const mib = (b: number) => (b / 2 ** 20).toFixed(1);

function row(p: PlacementResult): string[] {
  const pct = p.memoryLimitBytes ? ` (${Math.round((p.peakMemoryBytes / p.memoryLimitBytes) * 100)}%)` : '';
  const p99 = p.latency.ok ? p.latency.ok.p99Ms.toFixed(1) : '-';
  const passed = p.expectations.filter((e) => e.passed).length;
  const exp = p.error ? `error: ${p.error.slice(0, 40)}` : p.expectations.length ? `${passed}/${p.expectations.length} ${p.passed ? 'ok' : 'FAILED'}` : '-';
  return [
    p.name,
    p.memoryLimitBytes ? `${mib(p.memoryLimitBytes)} MiB` : '-',
    `${mib(p.peakMemoryBytes)}${pct}`,
    String(p.oomKills),
    String(p.restarts),
    p.okRps.toFixed(1),
    p.rejectedRps.toFixed(1),
    (p.errorRps + p.deadlineExceededRps).toFixed(1),
    p99,
    exp,
  ];
}

export function comparisonTable(results: RunResults): string {
  const head = ['placement', 'limit', 'peak MiB (% limit)', 'OOM kills', 'restarts', 'ok/s', 'rejected/s', 'failed/s', 'p99 ok ms', 'expectations'];
  const rows = [head, ...results.placements.map(row)];
  const widths = head.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const fmt = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  const sep = `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`;
  const lines = [fmt(head), sep, ...rows.slice(1).map(fmt)];
  const failed = results.placements.flatMap((p) => p.expectations.filter((e) => !e.passed).map((e) => `  ${p.name}: ${e.name}: ${e.message}`));
  if (failed.length) lines.push('', 'failed expectations:', ...failed);
  const costs = Object.entries(results.scenario.modeledCosts);
  if (costs.length) lines.push('', `modeled costs in effect: ${costs.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(', ')}`);
  return `${lines.join('\n')}\n`;
}
