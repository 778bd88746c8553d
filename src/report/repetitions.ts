// Each repetition's own figures for the report's spreads and distributions: from results.json where
// it keeps them, else from the repetition's samples (older folders, folders cut off mid-run).
import { PeakTracker, peakIn, peaksAtOomKill, type MemoryMeasure, type RepetitionFigures, type SampleLine, type VariantResult } from '../contract/index.js';

const round = (n: number, d = 3) => Math.round(n * 10 ** d) / 10 ** d;

/** One repetition's figures from its samples alone (peak from the samples' high-water marks, kills from the events). */
export function repetitionFromSamples(runDir: string, rep: number, samples: readonly SampleLine[], measure: MemoryMeasure): RepetitionFigures {
  const tracker = new PeakTracker();
  const counts = { ok: 0, rateLimited: 0, error: 0, deadlineExceeded: 0 };
  const seconds = new Set<number>();
  let callsAt = 0;
  const kills: number[] = [];
  let restarts = 0;
  for (const s of samples) {
    if (s.kind === 'memory') tracker.add(s);
    else if (s.kind === 'load') {
      counts.ok += s.ok;
      counts.rateLimited += s.rateLimited;
      counts.error += s.error;
      counts.deadlineExceeded += s.deadlineExceeded;
      seconds.add(Math.floor(s.t / 1000));
    } else if (s.kind === 'event') {
      if (s.type === 'phase' && s.phase === 'load') callsAt = s.t;
      else if (s.type === 'oom-kill') kills.push(s.t);
      else if (s.type === 'agent-restart') restarts++;
    }
  }
  const secs = seconds.size;
  const rate = (n: number) => (secs > 0 ? round(n / secs) : 0);
  const fetches = samples.filter((s) => s.kind === 'kubelet-fetch' && s.t >= callsAt && s.t <= callsAt + secs * 1000).length;
  const folded = samples.reduce((n, s) => n + (s.kind === 'kubelet-fetches' && s.t >= callsAt && s.t <= callsAt + secs * 1000 ? s.requests : 0), 0);
  const hasFetchLines = samples.some((s) => s.kind === 'kubelet-fetch' || s.kind === 'kubelet-fetches');
  return {
    rep,
    runDir,
    peakMemoryBytes: peakIn(kills.length ? peaksAtOomKill(tracker.peaks()) : tracker.peaks(), measure),
    okRps: rate(counts.ok),
    rejectedRps: rate(counts.rateLimited),
    errorRps: rate(counts.error),
    deadlineExceededRps: rate(counts.deadlineExceeded),
    oomKills: kills.length,
    firstOomKillMs: kills.length ? Math.round(Math.min(...kills) - callsAt) : null,
    restarts,
    loadSeconds: secs,
    kubeletRequestsPerSecond: hasFetchLines && secs > 0 ? round((fetches + folded) / secs, 2) : null,
  };
}

/** A variant's repetitions: results.json's record, else read from each repetition's samples. */
export function repetitionsOf(v: VariantResult, samples: ReadonlyMap<string, SampleLine[]>): RepetitionFigures[] {
  if (v.repetitionFigures?.length) return v.repetitionFigures;
  return v.runDirs.map((d, i) => repetitionFromSamples(d, Number(/\.r(\d+)$/.exec(d)?.[1] ?? i + 1), samples.get(d) ?? [], v.memoryMeasure));
}

/** "killed in 3 of 5: 8 s, 12 s, 40 s; 2 survived", "survived in all 3", "killed in the only run, at 8 s". */
export function oomKillDistribution(reps: readonly RepetitionFigures[]): string {
  const ran = reps.filter((r) => r.loadSeconds > 0 || r.firstOomKillMs !== null);
  if (ran.length === 0) return '—';
  const killed = ran
    .filter((r) => r.firstOomKillMs !== null)
    .map((r) => r.firstOomKillMs!)
    .sort((a, b) => a - b);
  const at = killed.map((ms) => `${ms < 10_000 ? (ms / 1000).toFixed(1) : Math.round(ms / 1000)} s`).join(', ');
  const survived = ran.length - killed.length;
  if (ran.length === 1) return killed.length ? `killed in the only run, at ${at}` : 'survived the only run';
  if (killed.length === 0) return `survived in all ${ran.length}`;
  return `killed in ${killed.length} of ${ran.length}: ${at}${survived ? `; ${survived} survived` : ''}`;
}
