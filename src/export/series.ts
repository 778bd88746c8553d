// A run folder's time series for other tools, read through the reports' own loader: per variant and
// repetition, one row per sample time holding what was sampled then — agent memory and limit (every
// 100 ms), storm calls by outcome, storm workers and bystander success (every second), attestations
// in flight and open connections (agent metrics), and the OOM kills so far. Timestamps are absolute:
// the run's start plus the sample's t (ms since that repetition's load start), so every variant's
// series starts at the run's start and they line up, as on the report's charts.
import type { SampleLine } from '../contract/index.js';
import type { LoadedRun } from '../report/index.js';

/** One exported measure: its OpenMetrics family (a label picks it out of a shared family) and its CSV column. */
export interface Measure {
  id: MeasureId;
  family: string;
  type: 'gauge' | 'counter';
  /** OpenMetrics unit; the family name ends with `_<unit>`. */
  unit: string | null;
  help: string;
  /** A label that tells the measures of one family apart (outcome="ok"). */
  label?: [string, string];
  column: string;
}

export type MeasureId =
  | 'memory'
  | 'memoryLimit'
  | 'ok'
  | 'rateLimited'
  | 'deadlineExceeded'
  | 'error'
  | 'stormWorkers'
  | 'bystanderSuccess'
  | 'inflight'
  | 'openConnections'
  | 'oomKills';

const CALLS_HELP = 'Storm calls finished in the second that ends at the timestamp, by outcome (ok, rate_limited, deadline_exceeded, error)';

/** In the order they are written; the measures of one family are adjacent. */
export const MEASURES: readonly Measure[] = [
  {
    id: 'memory',
    family: 'attestorm_agent_memory_bytes',
    type: 'gauge',
    unit: 'bytes',
    help: "The agent's memory: its cgroup's usage, or its RSS where OOM kills are emulated; every 100 ms",
    column: 'agent_memory_bytes',
  },
  {
    id: 'memoryLimit',
    family: 'attestorm_agent_memory_limit_bytes',
    type: 'gauge',
    unit: 'bytes',
    help: "The agent's memory limit",
    column: 'agent_memory_limit_bytes',
  },
  {
    id: 'ok',
    family: 'attestorm_storm_calls_per_second',
    type: 'gauge',
    unit: null,
    help: CALLS_HELP,
    label: ['outcome', 'ok'],
    column: 'storm_ok_per_second',
  },
  {
    id: 'rateLimited',
    family: 'attestorm_storm_calls_per_second',
    type: 'gauge',
    unit: null,
    help: CALLS_HELP,
    label: ['outcome', 'rate_limited'],
    column: 'storm_rate_limited_per_second',
  },
  {
    id: 'deadlineExceeded',
    family: 'attestorm_storm_calls_per_second',
    type: 'gauge',
    unit: null,
    help: CALLS_HELP,
    label: ['outcome', 'deadline_exceeded'],
    column: 'storm_deadline_exceeded_per_second',
  },
  {
    id: 'error',
    family: 'attestorm_storm_calls_per_second',
    type: 'gauge',
    unit: null,
    help: CALLS_HELP,
    label: ['outcome', 'error'],
    column: 'storm_error_per_second',
  },
  {
    id: 'stormWorkers',
    family: 'attestorm_storm_workers',
    type: 'gauge',
    unit: null,
    help: 'Storm worker processes calling during the second (the most at once)',
    column: 'storm_workers',
  },
  {
    id: 'bystanderSuccess',
    family: 'attestorm_bystander_success_ratio',
    type: 'gauge',
    unit: 'ratio',
    help: "Share of the bystander pods' calls that succeeded in the second (only seconds in which one finished)",
    column: 'bystander_success_ratio',
  },
  {
    id: 'inflight',
    family: 'attestorm_agent_inflight_attestations',
    type: 'gauge',
    unit: null,
    help: 'Workload attestations running in the agent, from its metrics endpoint',
    column: 'agent_inflight_attestations',
  },
  {
    id: 'openConnections',
    family: 'attestorm_agent_open_connections',
    type: 'gauge',
    unit: null,
    help: 'Connections open to the agent, from its metrics endpoint',
    column: 'agent_open_connections',
  },
  { id: 'oomKills', family: 'attestorm_agent_oom_kills', type: 'counter', unit: null, help: 'OOM kills of the agent so far', column: 'agent_oom_kills' },
];

export interface SeriesRow {
  /** ms since the repetition's load start, as in the samples. */
  t: number;
  values: Partial<Record<MeasureId, number>>;
}

/** One repetition of one variant, its rows in increasing t (one per sample time). */
export interface RepetitionSeries {
  variant: string;
  rep: number;
  rows: SeriesRow[];
}

export interface RunSeries {
  scenario: string;
  /** The run's start, ms since the epoch: a row's timestamp is this plus its t. */
  startMs: number;
  repetitions: RepetitionSeries[];
}

function rowsOf(samples: SampleLine[]): SeriesRow[] {
  const byT = new Map<number, SeriesRow['values']>();
  const at = (t: number) => {
    let v = byT.get(t);
    if (!v) byT.set(t, (v = {}));
    return v;
  };
  const ordered = [...samples].sort((a, b) => a.t - b.t);
  let kills = 0;
  for (const s of ordered) {
    if (s.kind === 'memory') {
      const v = at(s.t);
      v.memory = s.usageBytes;
      if (s.limitBytes > 0 && Number.isFinite(s.limitBytes)) v.memoryLimit = s.limitBytes;
    } else if (s.kind === 'load') {
      const v = at(s.t);
      Object.assign(v, { ok: s.ok, rateLimited: s.rateLimited, deadlineExceeded: s.deadlineExceeded, error: s.error });
      if (s.stormWorkers !== undefined) v.stormWorkers = s.stormWorkers;
      if (s.bystanders) {
        const b = s.bystanders;
        const calls = b.ok + b.rateLimited + b.deadlineExceeded + b.error;
        if (calls > 0) v.bystanderSuccess = b.ok / calls;
      }
    } else if (s.kind === 'metrics') {
      const v = at(s.t);
      if (s.inflightAttestations !== null) v.inflight = s.inflightAttestations;
      if (s.openConnections !== null) v.openConnections = s.openConnections;
    } else if (s.kind === 'event' && s.type === 'oom-kill') {
      at(s.t).oomKills = ++kills;
    }
  }
  const rows = [...byT].map(([t, values]) => ({ t, values })).sort((a, b) => a.t - b.t);
  // The counter starts at 0 with the repetition's first row, so a rate or increase has a base.
  if (rows.length > 0 && rows[0]!.values.oomKills === undefined) rows[0]!.values.oomKills = 0;
  return rows;
}

export function runSeries(run: LoadedRun): RunSeries {
  const startMs = Date.parse(run.results.startedAt);
  return {
    scenario: run.results.scenario?.name ?? '',
    startMs: Number.isFinite(startMs) ? startMs : 0,
    repetitions: run.results.variants.flatMap((v) =>
      v.runDirs.map((dir, i) => ({ variant: v.name, rep: i + 1, rows: rowsOf(run.samples.get(dir) ?? []) })).filter((r) => r.rows.length > 0),
    ),
  };
}
