// What the fake-API-server tests share: a kubeconfig pointing at the FAKE API server
// (test/kube/fake-apiserver.ts), one repetition run against it with the settings those tests have
// in common, and a real generator process behind the fake's pod proxy.
import { KubeConfig } from '@kubernetes/client-node';
import { adaptScenario, startGenerator, type GeneratorOptions, type RunningGenerator } from '../../src/kube/index.js';
import { loadKubeConfig, parseClusterTarget, runVariantInCluster, type RunVariantInClusterOptions } from '../../src/platform/cluster/index.js';
import type { RepMeasurement } from '../../src/scenario/index.js';
import type { FakeApiServer } from './fake-apiserver.js';

/** Writes a kubeconfig for the fake to `file`, its one context named `context`, and loads it with that context selected. */
/** A kubeconfig whose API server is a port nothing listens on: any request fails at once. */
export function unreachableKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:9' }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

export function fakeKubeConfig(fake: FakeApiServer, file: string, context = 'kind-fake'): KubeConfig {
  return loadKubeConfig(parseClusterTarget({ context }), fake.writeKubeconfig(file, context));
}

export interface FakeRunOptions extends Partial<Omit<RunVariantInClusterOptions, 'kc'>> {
  scenario: RunVariantInClusterOptions['scenario'];
  runId: string;
  runDir: string;
  /** Where the run's kubeconfig is written. */
  kubeconfig: string;
  /** The kubeconfig's context; default kind-fake. */
  context?: string;
}

/**
 * One repetition against the fake: the scenario's first variant, repetition 1 in
 * pre-attestation.r1, cluster name fake, no node cgroup on this host, never interrupted — unless
 * the options say otherwise.
 */
export function runOnFake(fake: FakeApiServer, o: FakeRunOptions): Promise<RepMeasurement> {
  const { kubeconfig, context, ...options } = o;
  return runVariantInCluster({
    kc: fakeKubeConfig(fake, kubeconfig, context),
    clusterName: 'fake',
    variant: adaptScenario(o.scenario)[0]!,
    rep: 1,
    dirName: 'pre-attestation.r1',
    nodeCgroup: null,
    signal: new AbortController().signal,
    ...options,
  });
}

/** A real generator process for pod `pod` of namespace `ns`, reached through the fake's pod proxy; the caller closes it. */
export async function proxiedGenerator(fake: FakeApiServer, ns: string, pod: string, load: GeneratorOptions['load']): Promise<RunningGenerator> {
  const g = await startGenerator({ podName: pod, port: 0, host: '127.0.0.1', log: () => {}, load });
  fake.proxies.set(`${ns}/${pod}`, g.url);
  return g;
}
