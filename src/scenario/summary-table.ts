// The end-of-run comparison on stderr, in the shape of the brief's table: one row per variant.
// Outcomes are the four the generator classifies, each in its own column (the same everywhere).
import type { RunResults, VariantResult } from '../contract/index.js';

const mib = (b: number) => (b / 2 ** 20).toFixed(1);

/** "2 passed, 1 inconclusive" / "1 FAILED of 3". */
export function expectationSummary(v: Pick<VariantResult, 'expectations' | 'error' | 'notJudged'>): string {
  if (v.error) return `error: ${v.error.slice(0, 40)}`;
  if (v.notJudged) return 'not judged: machine too slow';
  if (!v.expectations.length) return '-';
  const count = (x: string) => v.expectations.filter((e) => e.verdict === x).length;
  const parts = [`${count('passed')} passed`];
  if (count('inconclusive')) parts.push(`${count('inconclusive')} inconclusive`);
  if (count('failed')) parts.push(`${count('failed')} FAILED`);
  return parts.join(', ');
}

function row(v: VariantResult): string[] {
  const pct = v.memoryLimitBytes && v.peakMemoryBytes !== null ? ` (${Math.round((v.peakMemoryBytes / v.memoryLimitBytes) * 100)}%)` : '';
  const spread =
    v.spread.peakMemoryBytes && v.spread.peakMemoryBytes.min !== v.spread.peakMemoryBytes.max
      ? ` [${mib(v.spread.peakMemoryBytes.min)}–${mib(v.spread.peakMemoryBytes.max)}]`
      : '';
  const p99 = v.latency.ok ? v.latency.ok.p99Ms.toFixed(1) : '-';
  return [
    v.name,
    // An agent whose placement is unknown (external) is named by its kind alone.
    v.agent.placement === null ? v.agent.kind : `${v.agent.kind} ${v.agent.placement}`,
    v.memoryLimitBytes ? `${mib(v.memoryLimitBytes)} MiB` : '-',
    v.peakMemoryBytes === null ? 'unmeasured' : `${mib(v.peakMemoryBytes)}${pct}${spread}`,
    String(v.oomKills),
    String(v.restarts),
    v.storm ? `${v.storm.offeredRps.toFixed(0)}→${v.storm.deliveredRps.toFixed(0)}` : '-',
    v.bystanders && v.bystanders.calls > 0 ? `${Math.round(100 * v.bystanders.successRatio)}% (${(v.bystanders.longestGapMs / 1000).toFixed(1)}s)` : '-',
    v.okRps.toFixed(1),
    v.rejectedRps.toFixed(1),
    v.deadlineExceededRps.toFixed(1),
    v.errorRps.toFixed(1),
    p99,
    expectationSummary(v),
  ];
}

export function comparisonTable(results: RunResults): string {
  const head = [
    'variant',
    'agent',
    'limit',
    'peak MiB (% limit)',
    'OOM kills',
    'restarts',
    'offered→answered/s',
    'bystanders (gap)',
    'ok/s',
    'rejected/s',
    'deadline/s',
    'error/s',
    'p99 ok ms',
    'expectations',
  ];
  const rows = [head, ...results.variants.map(row)];
  const widths = head.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const fmt = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  const sep = `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`;
  const lines = [fmt(head), sep, ...rows.slice(1).map(fmt)];
  const noteworthy = results.variants.flatMap((v) =>
    v.expectations.filter((e) => e.verdict !== 'passed').map((e) => `  ${v.name}: ${e.name} ${e.verdict}: ${e.message}`),
  );
  if (noteworthy.length) lines.push('', 'expectations not passed:', ...noteworthy);
  const killedOutside = results.variants.flatMap((v) =>
    v.deaths
      .filter((d) => d.phase !== 'load')
      .map((d) => `  ${v.name} r${d.rep}: ${d.cause} at ${(d.atMs / 1000).toFixed(1)} s, during ${d.phase}${d.counted ? '' : ' (not counted)'}`),
  );
  if (killedOutside.length) lines.push('', 'agent deaths outside the load phase:', ...killedOutside);
  const shrank = results.variants.filter((v) => v.storm?.shrank).map((v) => `  ${v.name}: ${v.storm!.shrank}`);
  if (shrank.length) lines.push('', 'the storm shrank (figures understate the load):', ...shrank);
  const late = results.variants.filter((v) => v.storm?.late).map((v) => `  ${v.name}: ${v.storm!.late}`);
  if (late.length) lines.push('', 'the generator fell behind (per-second series bunched; totals exact):', ...late);
  if (results.droppedExpectations.length) lines.push('', `expectations dropped (variant subset): ${results.droppedExpectations.join('; ')}`);
  const costs = Object.entries(results.scenario.modeledCosts);
  if (costs.length) lines.push('', `modeled costs and behaviours in effect: ${costs.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(', ')}`);
  return `${lines.join('\n')}\n`;
}
