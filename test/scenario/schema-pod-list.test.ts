// agent.kubelet.podList in a scenario: parsed per variant, absent by default (the resolved
// scenario, and so its hash, is what it was), and refused by key and rule when out of bounds.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { parseScenario, type ReferenceAgent } from '../../src/scenario/index.js';
import { podListEmulatorOptions } from '../../src/targets/index.js';

function problems(input: unknown): string[] {
  try {
    parseScenario(input, '', {});
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('expected the scenario to be rejected');
}

const withPodList = (podList: unknown, kubelet: Record<string, unknown> = {}) => ({ name: 'x', agent: { kubelet: { ...kubelet, podList } } });

describe('scenario agent.kubelet.podList', () => {
  it('is absent unless written, so a scenario without it resolves as before', () => {
    const { scenario } = parseScenario({ name: 'x' });
    const kubelet = (scenario.variants[0]!.agent as ReferenceAgent).kubelet;
    expect('podList' in kubelet).toBe(false);
    expect(podListEmulatorOptions(kubelet.podList)).toEqual({});
  });

  it('reaches every variant, and a variant may set its own', () => {
    const { scenario } = parseScenario({
      name: 'x',
      agent: { kubelet: { podList: { pods: 60, containersPerPod: 3, terminatedPods: 40 } } },
      variants: [
        { name: 'small', agent: { placement: 'disabled', kubelet: { podList: { pods: 10 } } } },
        { name: 'busy', agent: { placement: 'disabled' } },
      ],
    });
    const lists = scenario.variants.map((v) => (v.agent as ReferenceAgent).kubelet.podList);
    expect(lists).toEqual([
      { pods: 10, containersPerPod: 3, terminatedPods: 40 },
      { pods: 60, containersPerPod: 3, terminatedPods: 40 },
    ]);
    expect(podListEmulatorOptions(lists[1])).toEqual({ nodePods: 60, containersPerPod: 3, terminatedPods: 40 });
  });

  it('refuses negative, fractional and absurd sizes naming the key and the rule', () => {
    const p = [
      ...problems(withPodList({ terminatedPods: -1 })),
      ...problems(withPodList({ pods: 0 })),
      ...problems(withPodList({ containersPerPod: 1.5 })),
      ...problems(withPodList({ pods: 100_000 })),
    ];
    expect(p).toContain('agent.kubelet.podList.terminatedPods must be an integer from 0 to 2000, got -1');
    expect(p).toContain('agent.kubelet.podList.pods must be an integer from 1 to 1000, got 0');
    expect(p).toContain('agent.kubelet.podList.containersPerPod must be an integer from 1 to 20, got 1.5');
    expect(p).toContain('agent.kubelet.podList.pods must be an integer from 1 to 1000, got 100000');
  });

  it('refuses a list of more than 4000 containers, and unknown keys', () => {
    const big = problems(withPodList({ pods: 1000, containersPerPod: 20 }));
    expect(big.some((x) => x.startsWith('agent.kubelet.podList must describe at most 4000 containers') && x.includes('got 20000'))).toBe(true);
    const unknown = problems(withPodList({ nodes: 3 }));
    expect(unknown.some((x) => x.startsWith('agent.kubelet.podList') && x.includes('nodes'))).toBe(true);
  });

  it('refuses fillerPods beside podList.pods: both say how many pods the node runs', () => {
    const p = problems(withPodList({ pods: 50 }, { fillerPods: 10 }));
    expect(p.some((x) => x.startsWith('agent.kubelet.podList.pods must not set both fillerPods and podList.pods'))).toBe(true);
  });
});
