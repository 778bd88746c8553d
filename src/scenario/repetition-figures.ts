// A repetition's own figures from its measurement, for results.json (VariantResult.repetitionFigures):
// the peak as judged, rates over the load, the first counted OOM kill from the calls' start.
import { peakIn, peaksAtOomKill, type MemoryMeasure, type RepetitionFigures } from '../contract/index.js';
import type { RepMeasurement } from './aggregate.js';

const round = (n: number, d = 3) => Math.round(n * 10 ** d) / 10 ** d;

export function repetitionFigures(m: RepMeasurement, rep: number, measure: MemoryMeasure): RepetitionFigures {
  const secs = m.loadSeconds;
  const rate = (n: number) => (secs > 0 ? round(n / secs) : 0);
  const firstKill = m.deaths.filter((d) => d.counted && (d.cause === 'oom-kill' || d.cause === 'emulated-oom')).sort((a, b) => a.atMs - b.atMs)[0];
  return {
    rep,
    runDir: m.runDir,
    peakMemoryBytes: peakIn(m.oomKills > 0 ? peaksAtOomKill(m.peaks) : m.peaks, measure),
    okRps: rate(m.counts.ok),
    rejectedRps: rate(m.counts.rateLimited),
    errorRps: rate(m.counts.error),
    deadlineExceededRps: rate(m.counts.deadlineExceeded),
    oomKills: m.oomKills,
    firstOomKillMs: firstKill ? Math.round(firstKill.atMs - (m.callsAtMs ?? 0)) : null,
    restarts: m.restarts,
    loadSeconds: secs,
    kubeletRequestsPerSecond: m.kubelet && m.kubelet.seconds > 0 ? round(m.kubelet.requests / m.kubelet.seconds, 2) : null,
  };
}
