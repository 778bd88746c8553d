// The sampler registry: every platform's samplers are created by name, each with its own target,
// and the cluster's samplers keep the figures they carry beside their lines (the kind node's peak).
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import '../../src/kind/sampler-kind-memory.js';
import '../../src/platform/cluster/sampler-pod-metrics.js';
import '../../src/spire/metrics.js';
import { KindAgentCgroup, podSliceCandidates } from '../../src/kind/index.js';
import { createSampler, samplerNames, type SamplerName } from '../../src/sample/index.js';

const POD_UID = '0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b';

describe('sampler registry', () => {
  it('names the local and the cluster samplers once their modules are loaded', () => {
    expect(samplerNames().sort()).toEqual(['agent-metrics', 'cgroup-memory', 'kind-cgroup-memory', 'pod-proxy-metrics', 'process-memory', 'spire-metrics']);
  });

  it('refuses a name nobody registered, listing the known ones', () => {
    expect(() => createSampler('no-such' as SamplerName, {})).toThrow(/unknown sampler "no-such"; known: .*kind-cgroup-memory/);
  });

  it("creates the kind node's memory sampler by name: its lines and its running peak (v2 fixture tree)", () => {
    const node = mkdtempSync(join(tmpdir(), 'attestorm-registry-'));
    const slice = join(node, podSliceCandidates(POD_UID)[0]!);
    mkdirSync(slice, { recursive: true });
    const write = (current: number) => {
      writeFileSync(join(slice, 'memory.current'), `${current}\n`);
      writeFileSync(join(slice, 'memory.max'), 'max\n');
      writeFileSync(join(slice, 'memory.events'), 'oom_kill 0\n');
      writeFileSync(join(slice, 'cpu.stat'), 'usage_usec 2000000\n');
      // Page cache the kernel would reclaim: the working set leaves it out.
      writeFileSync(join(slice, 'memory.stat'), `anon ${current - 800}\ninactive_file 500\nactive_file 300\n`);
    };
    let cg: KindAgentCgroup | null = null;
    const sampler = createSampler('kind-cgroup-memory', { cgroup: () => cg, limitBytes: 64 << 20 }, { intervalMs: 250 });
    expect(sampler.intervalMs).toBe(250);
    // Before the watch has seen the pod: no reading and no peak (never 0).
    expect(sampler.sample(0)).toBeNull();
    expect(sampler.peaks()).toBeNull();
    cg = new KindAgentCgroup({ version: 'v2', dir: node }, POD_UID);
    write(3000);
    expect(sampler.sample(100)).toMatchObject({
      kind: 'memory',
      t: 100,
      usageBytes: 3000,
      workingSetBytes: 2500,
      rssBytes: 2200,
      limitBytes: 64 << 20,
      cpuSeconds: 2,
    });
    write(1000);
    expect(sampler.sample(200)).toMatchObject({ usageBytes: 1000, peakBytes: 3000 });
    // The breakdown of the highest working set: no kernel line, no shmem line in this stat.
    expect(sampler.peaks()).toEqual({
      usageBytes: 3000,
      workingSetBytes: 2500,
      rssBytes: 2200,
      workingSetParts: { t: 100, workingSetBytes: 2500, rssBytes: 2200, kernelBytes: null, activeFileBytes: 300, shmemBytes: null },
    });
  });
});
