// The memory-sampler pod's logic (clusters that are not kind on this host) on fixture cgroup trees
// in a temp dir, laid out as each cgroup driver names them: finding the agent container by pod UID
// and container ID, reading v2 and v1 files, re-resolving after a restart, and the HTTP readings
// the runner pulls. Plus its manifest against the Kubernetes schema.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Pod } from 'kubernetes-models/v1';
import { readScenarioFile } from '../../src/scenario/index.js';
import {
  findPodDir,
  clusterVariants,
  manifestProblems,
  NodeCgroupReader,
  renderContext,
  renderVariant,
  startMemorySampler,
  type MemoryReading,
} from '../../src/kube/index.js';

const dir = mkdtempSync(join(tmpdir(), 'attestorm-memsampler-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const UID = '0b5e2f4c-7a1d-4e2b-9c3d-5f6a7b8c9d0e';
const CID1 = 'a'.repeat(64);
const CID2 = 'b'.repeat(64);
const MiB = 2 ** 20;

function v2Root(name: string): { root: string; scope: (cid: string) => string } {
  const root = join(dir, name);
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, 'cgroup.controllers'), 'cpu memory pids\n');
  const pod = join(root, 'kubepods.slice/kubepods-burstable.slice', `kubepods-burstable-pod${UID.replace(/-/g, '_')}.slice`);
  // A sibling pod that must not be picked.
  mkdirSync(join(root, 'kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod11111111_2222_3333_4444_555555555555.slice'), { recursive: true });
  return { root, scope: (cid) => join(pod, `cri-containerd-${cid}.scope`) };
}

function writeV2(scope: string, current: number, peak: number | null, max = 64 * MiB): void {
  mkdirSync(scope, { recursive: true });
  writeFileSync(join(scope, 'memory.current'), `${current}\n`);
  if (peak !== null) writeFileSync(join(scope, 'memory.peak'), `${peak}\n`);
  writeFileSync(join(scope, 'memory.max'), `${max}\n`);
  writeFileSync(join(scope, 'memory.events'), 'low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n');
  writeFileSync(join(scope, 'cpu.stat'), 'usage_usec 1500000\n');
}

describe("NodeCgroupReader: the agent container in its node's cgroup tree", () => {
  it('v2, systemd driver: finds the container scope by pod UID (underscores) and container ID, reads current and peak', () => {
    const { root, scope } = v2Root('v2-systemd');
    writeV2(scope(CID1), 20 * MiB, 30 * MiB);
    const r = new NodeCgroupReader(root);
    expect(r.flavour).toBe('v2');
    expect(r.read()).toBeNull(); // no target yet
    r.setTarget(UID, CID1);
    expect(r.read()).toMatchObject({ usageBytes: 20 * MiB, peakBytes: 30 * MiB, limitBytes: 64 * MiB, cpuSeconds: 1.5, dir: scope(CID1) });
  });

  it('a restart: a new container ID resolves the new scope; a scope that is gone reads as nothing, not 0', () => {
    const { root, scope } = v2Root('v2-restart');
    writeV2(scope(CID1), 20 * MiB, 30 * MiB);
    const r = new NodeCgroupReader(root);
    r.setTarget(UID, CID1);
    expect(r.read()!.dir).toBe(scope(CID1));
    rmSync(scope(CID1), { recursive: true });
    expect(r.read()).toBeNull();
    writeV2(scope(CID2), 5 * MiB, 6 * MiB);
    r.setTarget(UID, `containerd://${CID2}`.replace('containerd://', ''));
    expect(r.read()).toMatchObject({ usageBytes: 5 * MiB, peakBytes: 6 * MiB, dir: scope(CID2) });
  });

  it('v1, cgroupfs driver (pod<uid>/<id>): usage and max_usage from the memory hierarchy', () => {
    const root = join(dir, 'v1-cgroupfs');
    const c = join(root, 'memory/kubepods/burstable', `pod${UID}`, CID1);
    mkdirSync(c, { recursive: true });
    writeFileSync(join(c, 'memory.usage_in_bytes'), `${12 * MiB}\n`);
    writeFileSync(join(c, 'memory.max_usage_in_bytes'), `${40 * MiB}\n`);
    writeFileSync(join(c, 'memory.limit_in_bytes'), `${64 * MiB}\n`);
    writeFileSync(join(c, 'memory.oom_control'), 'oom_kill_disable 0\nunder_oom 0\noom_kill 1\n');
    const r = new NodeCgroupReader(root);
    expect(r.flavour).toBe('v1');
    r.setTarget(UID, `containerd://${CID1}`);
    expect(r.read()).toMatchObject({ usageBytes: 12 * MiB, peakBytes: 40 * MiB, limitBytes: 64 * MiB, oomKills: 1 });
  });

  it("kind's nested layout (kubelet.slice, Guaranteed QoS without a qos level) and cri-o scope names", () => {
    const root = join(dir, 'v2-kind');
    mkdirSync(root, { recursive: true });
    writeFileSync(join(root, 'cgroup.controllers'), 'memory\n');
    const pod = join(root, 'kubelet.slice/kubelet-kubepods.slice', `kubelet-kubepods-pod${UID.replace(/-/g, '_')}.slice`);
    writeV2(join(pod, `crio-${CID1}.scope`), 7 * MiB, 9 * MiB);
    expect(findPodDir(root, UID)).toBe(pod);
    const r = new NodeCgroupReader(root);
    r.setTarget(UID, `cri-o://${CID1}`);
    expect(r.read()!.usageBytes).toBe(7 * MiB);
  });

  it('refuses a root that is no cgroup hierarchy, by name', () => {
    mkdirSync(join(dir, 'empty'), { recursive: true });
    expect(() => new NodeCgroupReader(join(dir, 'empty'))).toThrow(
      `${join(dir, 'empty')} is neither a cgroup v2 root (cgroup.controllers) nor a v1 one (memory/)`,
    );
  });
});

describe('the memory-sampler server', () => {
  it('reads every 100 ms once told the target, serves the readings from an index, and keeps the peak across a restart', async () => {
    const { root, scope } = v2Root('v2-server');
    writeV2(scope(CID1), 20 * MiB, 50 * MiB);
    const s = await startMemorySampler({ cgroupRoot: root, port: 0, host: '127.0.0.1', intervalMs: 20, log: () => {} });
    const get = async (path: string, method = 'GET') => (await fetch(`${s.url}/${path}`, { method })).json() as Promise<any>;
    try {
      expect(await get('ready')).toEqual({ flavour: 'v2', target: null });
      await new Promise((r) => setTimeout(r, 100));
      expect((await get('readings-from-0')).readings).toEqual([]); // nothing to follow yet: no readings, not zeros
      expect(await get(`target-${UID}-${CID1}`, 'POST')).toEqual({ target: { podUid: UID, containerID: CID1 } });
      await new Promise((r) => setTimeout(r, 150));
      const first: MemoryReading[] = (await get('readings-from-0')).readings;
      expect(first.length).toBeGreaterThan(2);
      expect(first[0]).toMatchObject({ i: 0, usageBytes: 20 * MiB, peakBytes: 50 * MiB, limitBytes: 64 * MiB });
      // The agent restarted: a new scope with a lower high-water mark; the peak keeps the earlier one.
      rmSync(scope(CID1), { recursive: true });
      writeV2(scope(CID2), 10 * MiB, 12 * MiB);
      await get(`target-${UID}-containerd:${CID2}`, 'POST');
      await new Promise((r) => setTimeout(r, 150));
      const from = first.at(-1)!.i + 1;
      const later: MemoryReading[] = (await get(`readings-from-${from}`)).readings;
      expect(later.every((x) => x.i >= from)).toBe(true);
      expect(later.at(-1)).toMatchObject({ usageBytes: 10 * MiB, peakBytes: 50 * MiB });
    } finally {
      await s.close();
    }
  });
});

describe('the memory-sampler pod manifest', () => {
  it("passes the OpenAPI schema and our checks; on the agent's node, the node cgroup read-only, the project's CLI", async () => {
    const { scenario } = readScenarioFile(join(import.meta.dirname, '../../scenarios/quick.yaml'));
    const variant = clusterVariants(scenario, { runId: 'ms-1' })[0]!;
    const ctx = renderContext(scenario, variant, { runId: 'ms-1', memorySampler: true });
    const objects = renderVariant(ctx) as any[];
    expect(manifestProblems(objects, ctx)).toEqual([]);
    const pod = objects.find((o) => o.metadata.name === 'memory-sampler');
    expect(() => new Pod(pod).validate()).not.toThrow();
    expect(pod.metadata.labels['attestorm.dev/role']).toBe('memory-sampler');
    expect(pod.spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]).toEqual({
      labelSelector: { matchLabels: { 'attestorm.dev/role': 'agent' } },
      topologyKey: 'kubernetes.io/hostname',
    });
    expect(pod.spec.volumes).toEqual([{ name: 'host-cgroup', hostPath: { path: '/sys/fs/cgroup', type: 'Directory' } }]);
    const c = pod.spec.containers[0];
    expect(c.volumeMounts).toEqual([{ name: 'host-cgroup', mountPath: '/host/sys/fs/cgroup', readOnly: true }]);
    expect([...c.command, ...c.args]).toEqual([
      'node',
      '/app/dist/cli/main.mjs',
      'kind',
      'memory-sampler',
      '--cgroup-root',
      '/host/sys/fs/cgroup',
      '--port',
      '9101',
    ]);
    // Not rendered where the host reads the node's cgroup itself (kind).
    expect(renderVariant(renderContext(scenario, variant, { runId: 'ms-1' })).some((o) => o.metadata.name === 'memory-sampler')).toBe(false);
  });
});
