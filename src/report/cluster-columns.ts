// The three-node section (scenario.cluster.topology three-node): per variant and repetition, what
// the storm did on its own node, on the quiet node beside it, and to the server — side by side.
import type { ClusterRow } from './report-model.js';
import { fmt, type Column } from './table-columns.js';

const MIB = 2 ** 20;
const mib = (bytes: number | null) => (bytes === null ? '—' : fmt(bytes / MIB));
const deaths = (n: { oomKills: number; restarts: number }) => `${n.oomKills} / ${n.restarts}`;

function bystanders(r: ClusterRow): string {
  const b = r.quiet.bystanders;
  return b ? `${fmt(b.successRatio * 100, 0)}% (${b.ok}/${b.calls})` : '—';
}

function attestations(r: ClusterRow): string {
  const a = r.server.attestations;
  if (!r.server.pod) return 'no server';
  if (!a) return '—';
  const byNode = Object.entries(a.byNode)
    .map(([node, n]) => `${node} ${n}`)
    .join(', ');
  return `${a.total} (${a.duringLoad} during the load${byNode ? `; ${byNode}` : ''})`;
}

export const CLUSTER_COLUMNS: Column<ClusterRow>[] = [
  { header: 'variant', cell: (r) => (r.rep > 1 ? `${r.variant} r${r.rep}` : r.variant), numeric: false },
  { header: 'node', cell: (r) => r.storm.node, numeric: false, group: 'storm node', nowrap: true },
  { header: 'agent peak usage (MiB)', cell: (r) => mib(r.storm.peakUsageBytes), numeric: true, group: 'storm node' },
  { header: 'agent peak working set (MiB)', cell: (r) => mib(r.storm.peakWorkingSetBytes), numeric: true, group: 'storm node' },
  { header: 'OOM kills / restarts', cell: (r) => deaths(r.storm), numeric: true, group: 'storm node' },
  { header: 'node', cell: (r) => r.quiet.node, numeric: false, group: 'quiet node', nowrap: true },
  { header: 'agent peak working set (MiB)', cell: (r) => mib(r.quiet.peakWorkingSetBytes), numeric: true, group: 'quiet node' },
  { header: 'OOM kills / restarts', cell: (r) => deaths(r.quiet), numeric: true, group: 'quiet node' },
  { header: 'bystanders ok', cell: bystanders, numeric: true, group: 'quiet node' },
  { header: 'node', cell: (r) => r.server.node, numeric: false, group: 'server', nowrap: true },
  { header: 'CPU during the load (s)', cell: (r) => (r.server.pod ? fmt(r.server.cpuSeconds, 2) : '—'), numeric: true, group: 'server' },
  { header: 'peak CPU (cores)', cell: (r) => (r.server.pod ? fmt(r.server.peakCores, 2) : '—'), numeric: true, group: 'server' },
  { header: 'peak working set (MiB)', cell: (r) => (r.server.pod ? mib(r.server.peakWorkingSetBytes) : '—'), numeric: true, group: 'server' },
  { header: 'node attestations', cell: attestations, numeric: false, group: 'server' },
];

/** The columns with their group in the header, for tables that have one header row (Markdown). */
export function flatColumns<R>(columns: Column<R>[]): Column<R>[] {
  return columns.map(({ group, ...c }) => ({ ...c, header: group ? `${group}: ${c.header}` : c.header }));
}

/** What the section says above its table. */
export const CLUSTER_NOTE =
  "Three nodes side by side: the storm's node (the agent under test beside the storm's pods; memory from its cgroup), the quiet node (a second agent of the same variant, which no storm calls, beside the bystanders; memory as its kubelet reports it, about every 10 s) and the server on the control plane (spire-server for SPIRE variants: CPU and memory from its kubelet, node attestations from its log — an agent that restarts without its SVID attests again; the reference agent has no server).";
