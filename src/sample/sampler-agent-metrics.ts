// The reference agent's /metrics scraped once a second: attestations in flight, open connections,
// rejections by limiter key type, kubelet fetches. Scrape failures (agent down, OOM) yield nothing.
import type { MetricsSample } from '../contract/index.js';
import { parsePrometheusText, sumByLabel, sumMetric, type PromSample } from './prometheus-text.js';
import { registerSampler, type Sampler, type SamplerTarget } from './sampler.js';

/** The metrics sample for one scrape's text. */
export function metricsSampleFrom(t: number, samples: readonly PromSample[]): MetricsSample {
  return {
    kind: 'metrics',
    t,
    inflightAttestations: sumMetric(samples, 'workload_api_attestations_inflight'),
    openConnections: sumMetric(samples, 'workload_api_open_connections'),
    rejectedByKeyType: sumByLabel(samples, 'workload_api_rate_limit_exceeded_total', 'key_type'),
    kubeletFetches: sumMetric(samples, 'workload_api_kubelet_fetches_total'),
  };
}

export function agentMetricsSampler(target: SamplerTarget, opts: { intervalMs?: number } = {}): Sampler {
  const getUrl = target.metricsUrl;
  if (!getUrl) throw new Error('the agent-metrics sampler needs a metrics URL');
  const intervalMs = opts.intervalMs ?? 1000;
  return {
    name: 'agent-metrics',
    intervalMs,
    async sample(t): Promise<MetricsSample | null> {
      const url = getUrl();
      if (!url) return null;
      try {
        // A starving agent must not stall the sampler loop: give up well before the next scrape.
        const res = await fetch(url, { signal: AbortSignal.timeout(Math.max(200, intervalMs - 100)) });
        if (!res.ok) return null;
        return metricsSampleFrom(t, parsePrometheusText(await res.text()));
      } catch {
        return null;
      }
    },
  };
}

registerSampler('agent-metrics', agentMetricsSampler);
