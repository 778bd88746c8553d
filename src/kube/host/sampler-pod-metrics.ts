// The reference agent's Prometheus metrics once a second, scraped through the API server's pod
// proxy (the agent is on the host network; nothing else reaches it from the runner), as the same
// MetricsSample lines the local runner writes. Rejections are summed across agent restarts.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { metricsSampleFrom, parsePrometheusText, registerSampler, type Sampler, type SamplerOptions } from '../../sample/index.js';
import type { MetricsSample } from '../../scenario/index.js';
import { AGENT_METRICS_PORT } from '../render/objects.js';

export interface PodMetricsSampler extends Sampler {
  peakInflight(): number | null;
  rejections(): Record<string, number>;
}

export interface PodMetricsTarget {
  kc: KubeConfig;
  namespace: string;
  /** The agent pod's current name (null until the watch has seen it). */
  pod: () => string | null;
}

function podMetricsSampler(target: PodMetricsTarget, opts: SamplerOptions = {}): PodMetricsSampler {
  const { kc, namespace, pod } = target;
  const api = kc.makeApiClient(CoreV1Api);
  let peak: number | null = null;
  const banked: Record<string, number> = {};
  let current: Record<string, number> = {};
  const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);
  const bank = () => {
    for (const [k, v] of Object.entries(current)) banked[k] = (banked[k] ?? 0) + v;
    current = {};
  };
  return {
    name: 'pod-proxy-metrics',
    intervalMs: opts.intervalMs ?? 1000,
    peakInflight: () => peak,
    rejections: () => {
      const out = { ...banked };
      for (const [k, v] of Object.entries(current)) out[k] = (out[k] ?? 0) + v;
      return out;
    },
    async sample(t: number): Promise<MetricsSample | null> {
      const name = pod();
      if (!name) return null;
      const text = await api.connectGetNamespacedPodProxyWithPath({ name: `${name}:${AGENT_METRICS_PORT}`, namespace, path: 'metrics' });
      const m = metricsSampleFrom(t, parsePrometheusText(String(text)));
      if (m.inflightAttestations !== null) peak = Math.max(peak ?? 0, m.inflightAttestations);
      // A counter that went down is a new agent process: keep the previous one's totals.
      if (sum(m.rejectedByKeyType) < sum(current)) bank();
      current = { ...m.rejectedByKeyType };
      return m;
    },
  };
}

declare module '../../sample/sampler.js' {
  interface SamplerKinds {
    'pod-proxy-metrics': { target: PodMetricsTarget; sampler: PodMetricsSampler };
  }
}

registerSampler('pod-proxy-metrics', podMetricsSampler);
