// Time series for the charts, read from the samples: memory, calls/s, attestations in flight and the
// OOM-kill instants. x is seconds since each variant's load start, so variants line up.
import type { SampleLine } from '../contract/index.js';
import { downsampleMax } from './downsample.js';
import type { LoadedRun } from './load-run.js';
import type { Point, TimeSeries } from './report-model.js';
import { formatLimit } from './derive-table.js';

const MiB = 2 ** 20;
/** Enough to follow the shape of a 10-minute run at 100 ms without bloating the HTML. */
const MAX_MEMORY_POINTS = 1500;

export function deriveSeries(runs: LoadedRun[]): TimeSeries {
  const out: TimeSeries = { memory: [], limits: [], oomKills: [], okRps: [], rejectedRps: [], deadlineExceededRps: [], errorRps: [], bystanderSuccess: [], inflight: [], stormWorkers: [], faultWindows: [], baselinePeaks: [], loadEnd: null, xRange: null };
  const limits = new Set<number>();
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  const several = runs.length > 1;

  // A run compared with a baseline (results.baseline, written by --baseline) shows where each
  // variant's peak was before, next to where it is now.
  if (runs.length === 1) {
    const cmp = runs[0]!.results.baseline as { from?: string; figures?: Array<{ variant: string; figure: string; before: number }> } | undefined;
    for (const f of cmp?.figures ?? []) {
      if (f.figure === 'peakMemory' && Number.isFinite(f.before)) out.baselinePeaks.push({ placement: f.variant, label: `baseline peak · ${f.variant}`, mib: f.before / MiB });
    }
  }

  // The schedule is the same for every variant: draw it once, from the first that ran it.
  const scheduled = runs[0]?.results.variants.find((v) => v.faults?.length)?.faults?.filter((f) => f.rep === 1) ?? [];
  out.faultWindows = scheduled.map((f) => ({ action: f.action, from: f.atMs / 1000, to: (f.atMs + (f.forMs ?? 0)) / 1000 }));

  runs.forEach((run, runIndex) => {
    for (const placement of run.results.variants) {
      const reps = placement.runDirs;
      reps.forEach((repDir, i) => {
        const samples = run.samples.get(repDir) ?? [];
        const rep = i + 1;
        let label: string = placement.name;
        if (reps.length > 1) label += ` r${rep}`;
        if (several) label = `${run.label} · ${label}`;
        const base = { label, run: run.label, runIndex, placement: placement.name, rep };

        const memory: Point[] = [];
        const ok: Point[] = [];
        const rejected: Point[] = [];
        const deadline: Point[] = [];
        const failed: Point[] = [];
        const bystanders: Point[] = [];
        const stormWorkers: Point[] = [];
        // x = 0 is the moment the calls started (the 'load' phase), so pod start-up and warm-up are
        // negative and every variant's load lines up; folders without phase events keep their origin.
        const loadPhase = samples.find((x) => x.kind === 'event' && x.type === 'phase' && x.phase === 'load');
        const drainPhase = samples.find((x) => x.kind === 'event' && x.type === 'phase' && x.phase === 'drain');
        const zero = loadPhase ? loadPhase.t : 0;
        if (loadPhase && drainPhase) out.loadEnd = Math.max(out.loadEnd ?? 0, (drainPhase.t - zero) / 1000);
        const inflight: Point[] = [];
        const kills: Point[] = [];
        let lastUsage: number | null = null;
        for (const s of samples) {
          const x = (s.t - zero) / 1000;
          switch (s.kind) {
            case 'memory':
              memory.push({ x, y: s.usageBytes / MiB });
              lastUsage = s.usageBytes;
              if (s.limitBytes > 0 && Number.isFinite(s.limitBytes)) limits.add(s.limitBytes);
              break;
            case 'load':
              ok.push({ x, y: s.ok });
              rejected.push({ x, y: s.rateLimited });
              deadline.push({ x, y: s.deadlineExceeded });
              failed.push({ x, y: s.error });
              if (s.stormWorkers !== undefined) stormWorkers.push({ x, y: s.stormWorkers });
              if (s.bystanders) {
                const b = s.bystanders;
                const calls = b.ok + b.rateLimited + b.deadlineExceeded + b.error;
                // A second without a finished bystander call has no ratio: a gap, not a zero.
                bystanders.push({ x, y: calls > 0 ? b.ok / calls : null });
              }
              break;
            case 'metrics':
              if (s.inflightAttestations !== null) inflight.push({ x, y: s.inflightAttestations });
              break;
            case 'event':
              // The marker sits at the memory the agent held just before the kill: at or near the limit.
              if (s.type === 'oom-kill') kills.push({ x, y: (lastUsage ?? placement.memoryLimitBytes) / MiB });
              // The agent is gone until it restarts: break the lines instead of drawing a slope across the outage.
              // (Only after the line has started: an agent that failed before its first sample leaves nothing to break.)
              if (s.type === 'oom-kill' || s.type === 'agent-exit') {
                if (memory.length > 0) memory.push({ x, y: null });
                if (inflight.length > 0) inflight.push({ x, y: null });
              }
              break;
          }
          if (s.kind !== 'event') {
            if (x < min) min = x;
            if (x > max) max = x;
          }
        }
        // Lines need ascending x (the charts declare their data normalized); a samples file can hold
        // lines out of order, e.g. events of a failed first agent start logged before the retry's.
        for (const list of [memory, ok, rejected, deadline, failed, bystanders, inflight, stormWorkers, kills]) list.sort((a, b) => a.x - b.x);
        if (new Set(stormWorkers.map((p) => p.y)).size > 1) out.stormWorkers.push({ ...base, points: stormWorkers });
        if (bystanders.some((p) => p.y !== null)) out.bystanderSuccess.push({ ...base, points: bystanders });
        if (memory.length > 0) out.memory.push({ ...base, points: downsampleMax(memory, MAX_MEMORY_POINTS) });
        if (ok.length > 0) {
          out.okRps.push({ ...base, points: ok });
          // A placement that never rejected (disabled) would only add a flat line at zero.
          if (rejected.some((p) => p.y !== 0)) out.rejectedRps.push({ ...base, points: rejected });
          if (deadline.some((p) => p.y !== 0)) out.deadlineExceededRps.push({ ...base, points: deadline });
          if (failed.some((p) => p.y !== 0)) out.errorRps.push({ ...base, points: failed });
        }
        if (inflight.some((p) => p.y !== null)) out.inflight.push({ ...base, points: downsampleMax(inflight, MAX_MEMORY_POINTS) });
        if (kills.length > 0) out.oomKills.push({ ...base, points: kills });
      });
      if (placement.memoryLimitBytes > 0 && Number.isFinite(placement.memoryLimitBytes)) limits.add(placement.memoryLimitBytes);
    }
  });

  out.limits = [...limits].sort((a, b) => a - b).map((bytes) => ({ label: `limit ${formatLimit(bytes / MiB)}`, mib: bytes / MiB }));
  // Whole seconds at the ends read better than 30.05 on an axis.
  out.xRange = Number.isFinite(min) ? { min: Math.floor(min), max: Math.ceil(max) } : null;
  return out;
}

/** Highest cumulative rejection count per key type seen in metrics samples (counters only grow). */
export function rejectionsFromSamples(sampleLists: SampleLine[][]): Record<string, number> {
  const total: Record<string, number> = {};
  for (const samples of sampleLists) {
    const peak: Record<string, number> = {};
    for (const s of samples) {
      if (s.kind !== 'metrics') continue;
      for (const [key, n] of Object.entries(s.rejectedByKeyType ?? {})) peak[key] = Math.max(peak[key] ?? 0, n);
    }
    for (const [key, n] of Object.entries(peak)) total[key] = (total[key] ?? 0) + n;
  }
  return total;
}
