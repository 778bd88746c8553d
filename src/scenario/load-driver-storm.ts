// The real load driver: the scenario's load block handed to src/load's forking-worker generator,
// its per-second samples placed on the placement's timeline.
import { mergeEncodedHistograms, runLoad, summarizeHistogram, validateLoadOptions, type LoadOptions } from '../load/index.js';
import type { LoadDriver, LoadPhaseOptions, LoadPhaseResult } from './load-driver.js';
import type { Scenario } from './schema.js';

// runLoad emits second k about this long after that second ends (its EMIT_GRACE_MS + 1 s).
const EMIT_LAG_MS = 1700;

export function loadOptionsFor(s: Scenario, socket: string): LoadOptions {
  return {
    socket,
    pods: s.load.pods,
    workersPerPod: s.load.workersPerPod,
    durationMs: s.duration,
    connection: s.load.connection,
    client: s.load.client,
    ...(s.load.rate !== undefined ? { rate: s.load.rate } : {}),
    deadlineMs: s.load.deadline,
    retry: s.load.retry,
    methods: s.load.methods,
    audience: s.load.audience,
  };
}

export const stormLoadDriver: LoadDriver = {
  validate(s) {
    // The socket is chosen per placement; a placeholder of realistic length stands in for it.
    validateLoadOptions(loadOptionsFor(s, s.target?.socket ?? '/tmp/attestorm/placeholder-run-id/pre-attestation.r1.sock'), 'load');
  },

  async run(o: LoadPhaseOptions): Promise<LoadPhaseResult> {
    // The generator counts seconds from the moment its workers are all up (pods take a while to
    // fork); the first second it reports fixes where that moment falls on our timeline.
    let offset: number | null = null;
    const summary = await runLoad(loadOptionsFor(o.scenario, o.socket), {
      sandbox: o.sandbox as never,
      signal: o.signal,
      onSecond: (sample) => {
        offset ??= Math.max(0, Date.now() - o.origin - sample.t - EMIT_LAG_MS);
        o.onSecond({ ...sample, t: sample.t + offset });
      },
    });
    return {
      counts: { ok: summary.totals.ok, rateLimited: summary.totals.rateLimited, deadlineExceeded: summary.totals.deadlineExceeded, error: summary.totals.error },
      loadSeconds: summary.durationMs / 1000,
      callsStartedAt: Date.parse(summary.startedAt),
      histograms: summary.histograms,
      workerMemoryBytes: summary.workerMemoryBytes?.median ?? null,
    };
  },

  summarize(encoded) {
    const merged = encoded.length === 1 ? encoded[0]! : mergeEncodedHistograms(encoded);
    return summarizeHistogram(merged);
  },
};
