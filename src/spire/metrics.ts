// SPIRE agent's Prometheus telemetry read into attestorm's metrics samples: open Workload API
// connections, rate-limit rejections (SPIRE keys every limiter on the selector set), plus the SPIRE
// series the reference agent has no equal for, under `spire`. SPIRE counts no kubelet fetches and
// no attestations in flight: those stay null.
import type { MetricsSample } from '../contract/index.js';
import { parsePrometheusText, registerSampler, type PromSample, type Sampler, type SamplerTarget } from '../sample/index.js';
import { SPIRE_RATE_LIMIT_METHODS } from './options.js';

/** A metrics sample with SPIRE's own series; every count is cumulative since the agent started. */
export interface SpireMetricsSample extends MetricsSample {
  spire: {
    /** FetchJWTSVID calls by status (OK, Unavailable, PermissionDenied, ...). */
    fetchJwtSvidByStatus: Record<string, number>;
    /** Workload attestations by status. */
    attestationsByStatus: Record<string, number>;
    /** Sum (ms) and count of the attestation latency summary; mean = sum / count. */
    attestationElapsed: { sumMs: number; count: number } | null;
    /** Rate-limit rejections by gRPC method (/SpiffeWorkloadAPI/FetchJWTSVID). */
    rateLimitedByMethod: Record<string, number>;
    /** Workload API connections accepted since the agent started. */
    connectionsOpened: number | null;
    /** Every attestor's calls by attestor and status, e.g. { "k8s/OK": 10 }. */
    attestorCalls: Record<string, number>;
    /**
     * The Go runtime's own figures from the same endpoint (Prometheus' Go collector), so the agent's
     * cgroup memory can be split into heap and goroutine stacks; null when the endpoint has none.
     */
    runtime: SpireRuntimeFigures | null;
  };
}

export interface SpireRuntimeFigures {
  goroutines: number | null;
  /** Bytes in in-use heap spans (go_memstats_heap_inuse_bytes). */
  heapInuseBytes: number | null;
  /** Bytes of goroutine stacks (go_memstats_stack_inuse_bytes). */
  stackInuseBytes: number | null;
  /** Bytes the runtime obtained from the OS in all (go_memstats_sys_bytes). */
  sysBytes: number | null;
}

function runtimeFigures(samples: readonly PromSample[]): SpireRuntimeFigures | null {
  const one = (name: string): number | null => samples.find((s) => s.name === name)?.value ?? null;
  const figures = {
    goroutines: one('go_goroutines'),
    heapInuseBytes: one('go_memstats_heap_inuse_bytes'),
    stackInuseBytes: one('go_memstats_stack_inuse_bytes'),
    sysBytes: one('go_memstats_sys_bytes'),
  };
  return Object.values(figures).every((v) => v === null) ? null : figures;
}

// The go-metrics Prometheus sink names counters without a _total suffix; tolerate either.
function named(samples: readonly PromSample[], name: string): PromSample[] {
  return samples.filter((s) => s.name === name || s.name === `${name}_total`);
}

function sumOf(samples: readonly PromSample[], name: string): number | null {
  const found = named(samples, name);
  return found.length === 0 ? null : found.reduce((t, s) => t + s.value, 0);
}

function byLabels(samples: readonly PromSample[], name: string, labels: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of named(samples, name)) {
    const key = labels.map((l) => s.labels[l] ?? '').join('/');
    out[key] = (out[key] ?? 0) + s.value;
  }
  return out;
}

// The Prometheus sink rewrites label values ("/SpiffeWorkloadAPI/FetchJWTSVID" becomes
// "_SpiffeWorkloadAPI_FetchJWTSVID"): map the known methods back to their gRPC names.
const sanitize = (m: string) => m.replace(/[^A-Za-z0-9_]/g, '_');
const METHOD_BY_LABEL = new Map(Object.values(SPIRE_RATE_LIMIT_METHODS).map((m) => [sanitize(m), m]));

function methodName(label: string): string {
  return METHOD_BY_LABEL.get(label) ?? label;
}

/** The SPIRE metrics sample for one scrape. */
export function spireMetricsSampleFrom(t: number, samples: readonly PromSample[]): SpireMetricsSample {
  const rateLimitedByMethod: Record<string, number> = {};
  for (const [label, n] of Object.entries(byLabels(samples, 'spire_agent_workload_api_rate_limit_exceeded', ['method']))) {
    const m = methodName(label);
    rateLimitedByMethod[m] = (rateLimitedByMethod[m] ?? 0) + n;
  }
  const rejected = Object.values(rateLimitedByMethod).reduce((a, b) => a + b, 0);
  const elapsedSum = sumOf(samples, 'spire_agent_workload_api_workload_attestation_elapsed_time_sum');
  const elapsedCount = sumOf(samples, 'spire_agent_workload_api_workload_attestation_elapsed_time_count');
  return {
    kind: 'metrics',
    t,
    inflightAttestations: null,
    openConnections: sumOf(samples, 'spire_agent_workload_api_connections'),
    rejectedByKeyType: rejected > 0 ? { 'selector-set': rejected } : {},
    kubeletFetches: null,
    spire: {
      fetchJwtSvidByStatus: byLabels(samples, 'spire_agent_rpc_workload_api_fetch_jwtsvid', ['status']),
      attestationsByStatus: byLabels(samples, 'spire_agent_workload_api_workload_attestation', ['status']),
      attestationElapsed: elapsedSum !== null && elapsedCount !== null ? { sumMs: elapsedSum, count: elapsedCount } : null,
      rateLimitedByMethod,
      connectionsOpened: sumOf(samples, 'spire_agent_workload_api_connection'),
      attestorCalls: byLabels(samples, 'spire_agent_workload_api_workload_attestor', ['attestor', 'status']),
      runtime: runtimeFigures(samples),
    },
  };
}

/** One scrape of the agent's telemetry endpoint; null when it does not answer (agent down, OOM). */
export async function scrapeSpireMetrics(url: string, t: number, timeoutMs = 900): Promise<SpireMetricsSample | null> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) return null;
    return spireMetricsSampleFrom(t, parsePrometheusText(await res.text()));
  } catch {
    return null;
  }
}

/** The sampler of SPIRE's telemetry, once a second on the run's timeline (as the reference agent's). */
export function spireMetricsSampler(target: SamplerTarget, opts: { intervalMs?: number } = {}): Sampler {
  const getUrl = target.metricsUrl;
  if (!getUrl) throw new Error('the spire-metrics sampler needs a metrics URL');
  const intervalMs = opts.intervalMs ?? 1000;
  return {
    name: 'spire-metrics',
    intervalMs,
    async sample(t) {
      const url = getUrl();
      // A starving agent must not stall the sampler loop: give up well before the next scrape.
      return url ? scrapeSpireMetrics(url, t, Math.max(200, intervalMs - 100)) : null;
    },
  };
}

declare module '../sample/sampler.js' {
  interface SamplerKinds {
    'spire-metrics': { target: SamplerTarget; sampler: Sampler };
  }
}

registerSampler('spire-metrics', spireMetricsSampler);
