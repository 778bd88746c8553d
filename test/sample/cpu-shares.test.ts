// Who held a storm back, from CPU shares, and CPU in cores over a window of cumulative readings.
import { describe, expect, it } from 'vitest';
import { CumulativeCpuSeries, stormLimit } from '../../src/sample/index.js';

describe('stormLimit', () => {
  const base = { runnerCores: 0.05, machineBusyCores: 1.9, cores: 2 };
  it('the agent alone on a CPU: the generator at the limit of the other is the limit, not the agent', () => {
    expect(stormLimit({ ...base, generatorCores: 0.9, agentCores: 0.3, machineBusyCores: 1.3, agentCpus: 1 })).toEqual({
      by: 'generator',
      detail: "the generator's processes used 0.90 cores and the runner 0.05 of the 1 CPU left to them, the agent 0.30 of its 1",
    });
    expect(stormLimit({ ...base, generatorCores: 0.4, agentCores: 0.95, agentCpus: 1 })?.by).toBe('agent');
    expect(stormLimit({ ...base, generatorCores: 0.9, agentCores: 0.95, agentCpus: 1 })?.by).toBe('machine');
    // Neither at its limit: the storm's own shape (workers, deadlines, the agent's latency) set the rate.
    expect(stormLimit({ ...base, generatorCores: 0.3, agentCores: 0.2, machineBusyCores: 0.6, agentCpus: 1 })).toBeNull();
    // The generator's CPU taken by other processes (a build beside the run): still the generator's limit, said so.
    expect(stormLimit({ ...base, generatorCores: 0.01, runnerCores: 0.03, agentCores: 0.25, machineBusyCores: 2, agentCpus: 1 })).toEqual({
      by: 'generator',
      detail:
        "the generator's processes used 0.01 cores and the runner 0.03 of the 1 CPU left to them (other processes took about 0.85 of them), the agent 0.25 of its 1",
    });
  });

  it('shared CPUs: on a busy machine the side that took the larger part; an idle one limits nobody', () => {
    expect(stormLimit({ ...base, generatorCores: 1.5, agentCores: 0.3, agentCpus: null })?.by).toBe('generator');
    expect(stormLimit({ ...base, generatorCores: 0.5, agentCores: 1.3, agentCpus: null })?.by).toBe('agent');
    expect(stormLimit({ ...base, generatorCores: 0.2, agentCores: 0.2, machineBusyCores: 1.95, agentCpus: null })).toMatchObject({
      by: 'machine',
      detail: expect.stringContaining('1.50 by other processes'),
    });
    expect(stormLimit({ ...base, generatorCores: 0.5, agentCores: 0.3, machineBusyCores: 0.9, agentCpus: null })).toBeNull();
  });

  it('no figures, no claim', () => {
    expect(stormLimit({ ...base, generatorCores: null, agentCores: 0.3, agentCpus: 1 })).toBeNull();
    expect(stormLimit({ ...base, generatorCores: 0.9, agentCores: null, agentCpus: 1 })).toBeNull();
  });
});

describe('CumulativeCpuSeries', () => {
  it('cores over a window; a restart (the count dropping) starts over', () => {
    const s = new CumulativeCpuSeries();
    for (let t = 0; t <= 2000; t += 100) s.add(t, t / 1000 / 2); // half a core
    expect(s.coresBetween(1000, 2000)).toBeCloseTo(0.5, 6);
    expect(s.coresBetween(5000, 6000)).toBeNull();
    s.add(2100, 0.01);
    s.add(2600, 0.26);
    expect(s.coresBetween(2000, 3000)).toBeCloseTo(0.5, 6);
  });
});
