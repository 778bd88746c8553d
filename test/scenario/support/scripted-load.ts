// A LoadDriver for runner tests that starts no storm: the test's script makes real gRPC calls from
// this process to the agent under test (one fresh connection per call, like the storm's per-call
// mode) and may kill the agent in between. The runner, targets, samplers and cgroups are the real ones.
import { readdirSync, readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import type { LoadDriver, LoadPhaseOptions, LoadPhaseResult, Outcome, Scenario } from '../../../src/scenario/index.js';
import { SECURITY_HEADER, workloadProto } from '../../../src/proto/index.js';

export interface ScriptContext {
  opts: LoadPhaseOptions;
  /**
   * n concurrent FetchJWTSVID calls, each on its own connection; resolves with their outcomes (tallied).
   * `onEach` sees every outcome as it arrives (to act in the middle of a burst).
   */
  burst(n: number, onEach?: (o: Outcome) => void): Promise<Outcome[]>;
}

export interface ScriptedLoad extends LoadDriver {
  /** One entry per run(): the scenario it was given and the socket it called. */
  readonly runs: Array<{ scenario: Scenario; socket: string; counts: Record<Outcome, number> }>;
}

function classify(code: grpc.status, details: string): Outcome {
  if (code === grpc.status.OK) return 'ok';
  if ((code === grpc.status.UNAVAILABLE || code === grpc.status.RESOURCE_EXHAUSTED) && details.startsWith('rate limit exceeded')) return 'rateLimited';
  if (code === grpc.status.DEADLINE_EXCEEDED) return 'deadlineExceeded';
  return 'error';
}

function callOnce(socket: string): Promise<Outcome> {
  const Client = workloadProto().SpiffeWorkloadAPI;
  const client = new Client(`unix:${socket}`, grpc.credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 });
  const md = new grpc.Metadata();
  md.add(SECURITY_HEADER, 'true');
  return new Promise<Outcome>((resolve) => {
    (client.FetchJWTSVID as unknown as (r: object, m: grpc.Metadata, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null) => void) => void).call(
      client,
      { audience: ['test'] },
      md,
      { deadline: Date.now() + 5000 },
      (err) => resolve(err ? classify(err.code, err.details) : 'ok'),
    );
  }).finally(() => client.close());
}

/**
 * Runs `script` as the load phase. loadSeconds is the scenario's duration unless the run was
 * interrupted (then the time actually spent), so rates in the results do not depend on the machine.
 */
export function scriptedLoad(script: (ctx: ScriptContext) => Promise<void>): ScriptedLoad {
  const runs: ScriptedLoad['runs'] = [];
  return {
    runs,
    validate() {},
    summarize: () => null,
    async run(opts): Promise<LoadPhaseResult> {
      const counts: Record<Outcome, number> = { ok: 0, rateLimited: 0, deadlineExceeded: 0, error: 0 };
      runs.push({ scenario: opts.scenario, socket: opts.socket, counts });
      const callsStartedAt = Date.now();
      opts.onCallsStarted?.(callsStartedAt);
      await script({
        opts,
        burst(n, onEach) {
          const one = () =>
            callOnce(opts.socket).then((o) => {
              counts[o]++;
              onEach?.(o);
              return o;
            });
          return Promise.all(Array.from({ length: n }, one));
        },
      });
      opts.onSecond({ kind: 'load', t: callsStartedAt - opts.origin, ...counts, byCode: {}, histograms: {} });
      const loadSeconds = opts.signal.aborted ? (Date.now() - callsStartedAt) / 1000 : opts.durationMs / 1000;
      return { counts: { ...counts }, loadSeconds, callsStartedAt, histograms: {}, workerMemoryBytes: null };
    },
  };
}

/** PIDs of processes whose command line contains `needle` (the agent's config file path is unique per repetition). */
export function pidsWithArg(needle: string): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').includes(needle)) out.push(Number(entry));
    } catch {
      // Exited meanwhile.
    }
  }
  return out;
}
