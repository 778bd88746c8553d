// The reference agent's Prometheus metrics once a second, scraped through the API server's pod
// proxy (the agent is on the host network; nothing else reaches it from the runner), as the same
// MetricsSample lines the local platform writes; the repetition banks their rejections across agent
// restarts as it does locally.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { metricsSampleFrom, parsePrometheusText, registerSampler, type Sampler, type SamplerOptions } from '../../sample/index.js';
import type { MetricsSample } from '../../scenario/index.js';
import { AGENT_METRICS_PORT } from '../../kube/index.js';
import { withinMs } from '../../util/index.js';

export interface PodMetricsTarget {
  kc: KubeConfig;
  namespace: string;
  /** The agent pod's current name (null until the watch has seen it). */
  pod: () => string | null;
}

function podMetricsSampler(target: PodMetricsTarget, opts: SamplerOptions = {}): Sampler {
  const { kc, namespace, pod } = target;
  const api = kc.makeApiClient(CoreV1Api);
  return {
    name: 'pod-proxy-metrics',
    intervalMs: opts.intervalMs ?? 1000,
    async sample(t: number): Promise<MetricsSample | null> {
      const name = pod();
      if (!name) return null;
      // Bounded: an agent on a node that went away must not hold the sampler loop's stop.
      const text = await withinMs(
        api.connectGetNamespacedPodProxyWithPath({ name: `${name}:${AGENT_METRICS_PORT}`, namespace, path: 'metrics' }),
        5000,
        `GET ${name} metrics`,
      );
      return metricsSampleFrom(t, parsePrometheusText(String(text)));
    },
  };
}

declare module '../../sample/sampler.js' {
  interface SamplerKinds {
    'pod-proxy-metrics': { target: PodMetricsTarget; sampler: Sampler };
  }
}

registerSampler('pod-proxy-metrics', podMetricsSampler);
