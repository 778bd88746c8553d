// A whole `attestorm run --context` as the run command wires it (clusterPlatform), against the
// FAKE API server: results.json must describe where the variants ran — the preflight's server
// version, nodes and image digests in platform.detail, and the cluster's way of measuring (kernel
// OOM kills, kubelet pod cgroups, the node's cgroup version from the memory-sampler pod) in
// environment — not this host's sandbox. The agent, generator and sampler behind the proxy are real.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseScenario, stormLoadDriver } from '../../src/scenario/index.js';
import { runScenario } from '../../src/runner/index.js';
import { clusterPlatform } from '../../src/platform/index.js';
import { startGenerator, startMemorySampler, type RunningGenerator } from '../../src/kube/index.js';
import { startTestAgent, type TestAgent } from '../agent/harness.js';
import { FakeApiServer } from './fake-apiserver.js';
import { fakeKubeConfig } from './support.js';

const dir = mkdtempSync(join(tmpdir(), 'attestorm-cluster-run-'));
const AGENT_UID = '5e6f7a8b-1111-4222-8333-944455556666';
const MiB = 2 ** 20;
const DIGEST = 'docker.io/library/attestorm@sha256:' + 'ab'.repeat(32);

describe('attestorm run --context: what results.json says about the cluster (fake API server)', () => {
  let agent: TestAgent;
  let generator: RunningGenerator;
  beforeAll(async () => {
    agent = await startTestAgent({ attestors: ['unix'] });
    generator = await startGenerator({
      podName: 'generator-0',
      port: 0,
      host: '127.0.0.1',
      log: () => {},
      load: { socket: agent.socketPath, workersPerPod: 1, deadlineMs: 200 },
    });
  });
  afterAll(async () => {
    await generator?.close();
    await agent?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('platform.detail has the server version, the nodes and the image digest; environment is the cluster’s', async () => {
    const fake = await new FakeApiServer({ version: 'v1.34.4', nodeImages: [['docker.io/library/attestorm:dev', DIGEST]], agentPodUid: AGENT_UID }).start();
    const root = join(dir, 'node');
    mkdirSync(root, { recursive: true });
    writeFileSync(join(root, 'cgroup.controllers'), 'memory\n');
    const sampler = await startMemorySampler({ cgroupRoot: root, port: 0, host: '127.0.0.1', log: () => {} });
    fake.proxies.set('*/generator-0', generator.url);
    fake.proxies.set('*/memory-sampler', sampler.url);
    // The kubelet's part: the agent container's cgroup once its pod exists.
    let stop = false;
    const kubelet = (async () => {
      while (!stop) {
        const ns = [...fake.objects.keys()].map((k) => /^\/api\/v1\/namespaces\/(atst-[^/]+)$/.exec(k)?.[1]).find(Boolean);
        const cid = ns && (fake.agentPod(ns)?.status?.containerStatuses?.[0]?.containerID as string | undefined)?.replace('containerd://', '');
        if (cid) {
          const d = join(
            root,
            'kubepods.slice/kubepods-burstable.slice',
            `kubepods-burstable-pod${AGENT_UID.replace(/-/g, '_')}.slice`,
            `cri-containerd-${cid}.scope`,
          );
          mkdirSync(d, { recursive: true });
          writeFileSync(join(d, 'memory.current'), `${10 * MiB}\n`);
          writeFileSync(join(d, 'memory.peak'), `${12 * MiB}\n`);
          writeFileSync(join(d, 'memory.max'), `${64 * MiB}\n`);
          // 2 MiB of it inactive page cache: a working set of 8 MiB beside a usage of 10 (peak 12).
          writeFileSync(join(d, 'memory.stat'), `anon ${7 * MiB}\nfile ${3 * MiB}\ninactive_file ${2 * MiB}\nactive_file ${1 * MiB}\n`);
          return;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    try {
      const loaded = parseScenario({
        name: 'ctx-run',
        duration: '3s',
        warmup: '300ms',
        placements: ['pre-attestation'],
        agent: { memoryLimit: '64Mi', attestors: ['unix'] },
        load: { pods: 1, workersPerPod: 1, deadline: '200ms' },
      });
      const kc = fakeKubeConfig(fake, join(dir, 'kc.yaml'), 'local');
      const cluster = { kc, target: { context: 'local', kindName: null }, clusterName: 'local', nodeCgroup: null, note: null };
      const outDir = join(dir, 'run');
      const outcome = await runScenario({ loaded, load: stormLoadDriver, command: 'attestorm run', render: false, outDir, platform: clusterPlatform(cluster) });
      expect(outcome.results.variants[0]?.error).toBeUndefined();
      const results = JSON.parse(readFileSync(join(outDir, 'results.json'), 'utf8'));
      expect(results.platform).toEqual({
        name: 'cluster',
        detail: {
          cluster: 'local',
          context: 'local',
          serverVersion: 'v1.34.4',
          nodes: [{ name: 'fake-control-plane', uid: 'node-uid-1', kubeletVersion: 'v1.31.0-fake', containerRuntime: 'containerd://fake', kernel: '6.1.0' }],
          imageDigests: { 'attestorm:dev': DIGEST },
        },
      });
      expect(results.environment).toMatchObject({ oomFidelity: 'cgroup-oom', podFidelity: 'cgroup-pods', cgroupVersion: 'v2' });
      expect(results.environment.cpuShare).not.toMatch(/no cgroup/);
      expect(results.variants[0].memoryMeasure).toBe('working-set');
      expect(results.variants[0].peakMemoryBytes).toBe(8 * MiB);
      expect(results.variants[0].peaks.usageBytes).toBe(12 * MiB);
    } finally {
      stop = true;
      await kubelet;
      await sampler.close();
      await fake.close();
    }
  }, 120_000);
});
