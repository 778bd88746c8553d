// The workers' client of a cluster run as the runner records it: taken from the load pods' final
// dumps (what `kind generator` reports as it ran), one pod that fell back speaking for all (the
// record beside the client asked for, and its folding over repetitions: test/scenario/expectations).
import { describe, expect, it } from 'vitest';
import { LoadPods } from '../../src/platform/cluster/index.js';
import { type GeneratorFinal, type ClusterLoad } from '../../src/kube/index.js';
import { unreachableKubeConfig } from './support.js';

// No request is made: the pods' finals are what the collector keeps after pulling them.
const kc = unreachableKubeConfig();

const socket = '/run/attestorm/sockets/agent.sock';
const load: ClusterLoad = {
  pods: 2,
  workersPerPod: 3,
  durationMs: 10_000,
  warmupMs: 1000,
  generator: { socket, workersPerPod: 3, client: 'native' },
  bystanders: { pods: 1, workersPerPod: 1, uid: 'same', generator: { socket, workersPerPod: 1, client: 'native', rate: 1 } },
};

const final = (pod: string, over: Partial<GeneratorFinal>): GeneratorFinal => ({
  pod,
  ready: true,
  released: true,
  finished: true,
  calls: 10,
  cpuMs: 5,
  workerPids: [1, 2, 3],
  parts: 4,
  longestOkGapMs: 100,
  failure: null,
  ...over,
});

function podsWith(finals: GeneratorFinal[]): LoadPods {
  const pods = new LoadPods(kc, 'ns', load);
  for (const f of finals) (f.pod.startsWith('bystander') ? pods.bystanders! : pods.storm).finals.set(f.pod, f);
  return pods;
}

describe('the workers client of a cluster run', () => {
  it('is what the pods ran; a pod that fell back names the client and why, for them all', () => {
    const native = podsWith([
      final('generator-0', { client: 'native' }),
      final('generator-1', { client: 'native' }),
      final('bystander-0', { client: 'native' }),
    ]);
    expect(native.result(10_000).client).toEqual({ ran: 'native' });
    native.destroy();
    const why = 'client native unavailable, running h2 workers instead: no C compiler: "cc" is not an executable in PATH (/usr/bin)';
    const fell = podsWith([final('generator-0', { client: 'native' }), final('bystander-0', { client: 'h2', clientFallback: why })]);
    expect(fell.result(10_000).client).toEqual({ ran: 'h2', fallback: why });
    fell.destroy();
    // Pods of an image that does not report its client: nothing to record.
    const silent = podsWith([final('generator-0', {})]);
    expect(silent.result(10_000).client).toBeUndefined();
    silent.destroy();
  });
});
