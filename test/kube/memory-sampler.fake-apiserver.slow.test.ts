// Memory on clusters that are not kind on this host, against the FAKE API server (no cluster can
// run here): the runner applies the memory-sampler pod, tells it the agent container (again after a
// restart), pulls its 100 ms readings through the pod proxy onto the run's timeline, and reports the
// peak — or, when no reading ever came, an unmeasured peak (null), never 0. The sampler process
// behind the proxy is the real one, reading a fixture cgroup tree.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aggregateVariant, parseScenario, stormLoadDriver, type Scenario } from '../../src/scenario/index.js';
import { adaptScenario, namespaceName, startMemorySampler, type RunningGenerator } from '../../src/kube/index.js';
import { startTestAgent, type TestAgent } from '../agent/harness.js';
import { FakeApiServer, hex64 } from './fake-apiserver.js';
import { proxiedGenerator, runOnFake } from './support.js';

const dir = mkdtempSync(join(tmpdir(), 'attestorm-kube-mem-'));
const AGENT_UID = '3c4d5e6f-1111-4222-8333-944455556666';
const MiB = 2 ** 20;

function scenario(): Scenario {
  return parseScenario({
    name: 'kind-mem',
    duration: '3s',
    warmup: '300ms',
    placements: ['pre-attestation'],
    agent: { memoryLimit: '64Mi', attestors: ['unix'] },
    load: { pods: 1, workersPerPod: 1, deadline: '200ms' },
  }).scenario;
}

describe('the memory-sampler pod in a --context run (fake API server)', () => {
  let agent: TestAgent;
  const generators: RunningGenerator[] = [];
  beforeAll(async () => {
    agent = await startTestAgent({ attestors: ['unix'] });
  });
  afterAll(async () => {
    await Promise.all(generators.map((g) => g.close()));
    await agent?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const generator = async (fake: FakeApiServer, ns: string) => {
    generators.push(await proxiedGenerator(fake, ns, 'generator-0', { socket: agent.socketPath, workersPerPod: 1, deadlineMs: 200 }));
  };

  it('applies the sampler, follows the agent container across a restart, writes its readings and the peak', async () => {
    const fake = await new FakeApiServer({ nodeImages: ['attestorm:dev'], agentPodUid: AGENT_UID }).start();
    // The agent's node, as the sampler pod sees it through its hostPath (a v2 fixture tree).
    const root = join(dir, 'node');
    mkdirSync(root, { recursive: true });
    writeFileSync(join(root, 'cgroup.controllers'), 'memory\n');
    const podDir = join(root, 'kubepods.slice/kubepods-burstable.slice', `kubepods-burstable-pod${AGENT_UID.replace(/-/g, '_')}.slice`);
    const write = (cid: string, current: number, peak: number) => {
      const d = join(podDir, `cri-containerd-${cid}.scope`);
      mkdirSync(d, { recursive: true });
      writeFileSync(join(d, 'memory.current'), `${current}\n`);
      writeFileSync(join(d, 'memory.peak'), `${peak}\n`);
      writeFileSync(join(d, 'memory.max'), `${64 * MiB}\n`);
    };
    const sampler = await startMemorySampler({ cgroupRoot: root, port: 0, host: '127.0.0.1', log: () => {} });
    try {
      const s = scenario();
      const variant = adaptScenario(s)[0]!;
      const runId = 'mem-1';
      const ns = namespaceName(runId, variant.name, 1);
      await generator(fake, ns);
      fake.proxies.set(`${ns}/memory-sampler`, sampler.url);
      // The first container's scope (its ID is the fake's), then a restart into a new one.
      const kubelet = (async () => {
        while (!fake.agentPod(ns)?.status) await new Promise((r) => setTimeout(r, 20));
        const first = (fake.agentPod(ns)!.status.containerStatuses[0].containerID as string).replace('containerd://', '');
        write(first, 20 * MiB, 33 * MiB);
        while (!fake.requests.some((r) => r.includes('/proxy/go-'))) await new Promise((r) => setTimeout(r, 50));
        await new Promise((r) => setTimeout(r, 800));
        const second = hex64();
        write(second, 8 * MiB, 9 * MiB);
        fake.updateAgent(ns, (c) => {
          c.lastState = { terminated: { reason: 'Error', exitCode: 1, containerID: c.containerID, finishedAt: new Date().toISOString() } };
          c.restartCount = 1;
          c.containerID = `containerd://${second}`;
          c.state = { running: { startedAt: new Date().toISOString() } };
        });
        return [first, second];
      })();
      const runDir = join(dir, 'run');
      const m = await runOnFake(fake, { kubeconfig: join(dir, 'kc.yaml'), context: 'other', clusterName: 'other', scenario: s, variant, runId, runDir });
      const [first, second] = await kubelet;
      expect(fake.applies.some((a) => a.kind === 'Pod' && a.name === 'memory-sampler')).toBe(true);
      const targets = fake.requests
        .filter((r) => r.startsWith('POST') && r.includes('memory-sampler') && r.includes('/proxy/target-'))
        .map((r) => r.split('/proxy/')[1]);
      expect(targets[0]).toBe(`target-${AGENT_UID}-${first}`);
      expect(targets).toContain(`target-${AGENT_UID}-${second}`);
      expect(m.peaks.usageBytes).toBe(33 * MiB);
      expect(m.peakSource).toBe('kernel');
      const mem = readFileSync(join(runDir, 'pre-attestation.r1', 'samples.ndjson'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
        .filter((l) => l.kind === 'memory');
      expect(mem.length).toBeGreaterThan(10);
      expect(mem[0]).toMatchObject({ usageBytes: 20 * MiB, peakBytes: 33 * MiB, limitBytes: 64 * MiB });
      expect(mem.at(-1)).toMatchObject({ usageBytes: 8 * MiB, peakBytes: 33 * MiB });
      // On the run's timeline: ascending, warm-up readings before 0.
      expect(mem[0].t).toBeLessThan(0);
      expect(mem.every((l, i) => i === 0 || l.t >= mem[i - 1].t)).toBe(true);
    } finally {
      await sampler.close();
      await fake.close();
    }
  }, 120_000);

  it('no reading ever came: the peak is unmeasured (null) in the repetition and in results, and the run says so', async () => {
    const fake = await new FakeApiServer({ nodeImages: ['attestorm:dev'] }).start();
    try {
      const s = scenario();
      const variant = adaptScenario(s)[0]!;
      const runId = 'mem-none';
      const ns = namespaceName(runId, variant.name, 1);
      await generator(fake, ns); // the sampler pod is applied but nothing answers behind its proxy
      const runDir = join(dir, 'run-none');
      const m = await runOnFake(fake, { kubeconfig: join(dir, 'kc2.yaml'), context: 'other', clusterName: 'other', scenario: s, variant, runId, runDir });
      expect(m.counts.ok + m.counts.rateLimited + m.counts.error + m.counts.deadlineExceeded).toBeGreaterThan(0);
      expect(m.peaks).toEqual({ workingSetBytes: null, usageBytes: null, rssBytes: null });
      expect(m.peakSource).toBe('unmeasured');
      const v = aggregateVariant('pre-attestation', { kind: 'reference', placement: 'pre-attestation', key: null }, [m], (e) => stormLoadDriver.summarize(e));
      expect(v.peakMemoryBytes).toBeNull();
      expect(v.spread.peakMemoryBytes).toBeUndefined();
      const notes = readFileSync(join(runDir, 'pre-attestation.r1', 'samples.ndjson'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
        .filter((l) => l.kind === 'event' && l.type === 'note')
        .map((l) => l.detail);
      expect(notes).toContain(`no reading came from the memory-sampler pod in ${ns}: the agent's peak memory is unmeasured in this run`);
    } finally {
      await fake.close();
    }
  }, 120_000);
});
