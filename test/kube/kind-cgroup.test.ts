// Reading a kind node's agent cgroup from the host: the kubelet's paths, the node's cgroup from its
// init's /proc entry, and cgroup v2 (what kind on GitHub runners uses) on a fixture tree with the v2
// file formats. The real v1 cgroups and a real kernel OOM kill: kind-cgroup-oom.slow.test.ts.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { containerScopeName, KindAgentCgroup, nodeCgroupRoot, podSliceCandidates } from '../../src/kind/index.js';
import { readCgroupMemory } from '../../src/kube/index.js';

const POD_UID = '0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b';
const CID = 'a'.repeat(64);

describe('paths (systemd driver, cgroupRoot /kubelet)', () => {
  it('pod slices for Guaranteed (no QoS level), Burstable and BestEffort; container scopes', () => {
    const uid = POD_UID.replace(/-/g, '_');
    expect(podSliceCandidates(POD_UID)).toEqual([
      `kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-pod${uid}.slice`,
      `kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-burstable.slice/kubelet-kubepods-burstable-pod${uid}.slice`,
      `kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod${uid}.slice`,
    ]);
    expect(containerScopeName(`containerd://${CID}`)).toBe(`cri-containerd-${CID}.scope`);
    expect(() => containerScopeName('containerd://short')).toThrow('container ID must be <runtime>://<64 hex>, got "containerd://short"');
  });

  it("the node container's cgroup from its init PID: the unified line on v2, the memory line on v1", () => {
    const proc = mkdtempSync(join(tmpdir(), 'attestorm-proc-'));
    const cg = mkdtempSync(join(tmpdir(), 'attestorm-cg-'));
    mkdirSync(join(proc, '42'));
    writeFileSync(join(proc, '42', 'cgroup'), '0::/system.slice/docker-abc123.scope\n');
    expect(nodeCgroupRoot(42, { procRoot: proc, cgroupRoot: cg })).toEqual({ version: 'v2', dir: join(cg, 'system.slice/docker-abc123.scope') });
    // kind's entrypoint on v2 puts the node's init into <node>/init.scope.
    writeFileSync(join(proc, '42', 'cgroup'), '0::/system.slice/docker-abc123.scope/init.scope\n');
    expect(nodeCgroupRoot(42, { procRoot: proc, cgroupRoot: cg }).dir).toBe(join(cg, 'system.slice/docker-abc123.scope'));
    // Wherever the init sits below the node's root, the ancestor holding kubelet.slice is the root.
    mkdirSync(join(cg, 'system.slice/docker-def456.scope/kubelet.slice'), { recursive: true });
    writeFileSync(join(proc, '42', 'cgroup'), '0::/system.slice/docker-def456.scope/init.scope/sub\n');
    expect(nodeCgroupRoot(42, { procRoot: proc, cgroupRoot: cg }).dir).toBe(join(cg, 'system.slice/docker-def456.scope'));
    mkdirSync(join(cg, 'memory'));
    writeFileSync(join(proc, '42', 'cgroup'), '4:memory:/docker/abc123\n1:cpu,cpuacct:/docker/abc123\n0::/\n');
    expect(nodeCgroupRoot(42, { procRoot: proc, cgroupRoot: cg })).toEqual({ version: 'v1', dir: join(cg, 'memory/docker/abc123') });
    expect(() => nodeCgroupRoot(7, { procRoot: proc })).toThrow(/cannot read .*\/7\/cgroup of the node container/);
  });
});

describe('cgroup v2 (fixture tree: no v2 memory controller on this machine)', () => {
  it('reads memory.current/peak/max/events and cpu.stat; the pod slice survives a new container scope', () => {
    const node = mkdtempSync(join(tmpdir(), 'attestorm-v2-'));
    const slice = join(node, podSliceCandidates(POD_UID)[0]!);
    const scope1 = join(slice, containerScopeName(`containerd://${CID}`));
    mkdirSync(scope1, { recursive: true });
    const write = (dir: string, current: number, oom: number) => {
      writeFileSync(join(dir, 'memory.current'), `${current}\n`);
      writeFileSync(join(dir, 'memory.peak'), `${current * 2}\n`);
      writeFileSync(join(dir, 'memory.max'), 'max\n');
      writeFileSync(join(dir, 'memory.events'), `low 0\nhigh 0\nmax 0\noom 0\noom_kill ${oom}\noom_group_kill 0\n`);
      writeFileSync(join(dir, 'cpu.stat'), 'usage_usec 1500000\n');
      writeFileSync(join(dir, 'memory.pressure'), 'some avg10=0.00 avg60=0.00 avg300=0.00 total=1234\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=567\n');
    };
    write(slice, 1000, 0);
    write(scope1, 900, 0);
    const cg = new KindAgentCgroup({ version: 'v2', dir: node }, POD_UID);
    expect(cg.podSlice()).toBe(slice);
    cg.setContainer(`containerd://${CID}`);
    expect(cg.readContainer()).toEqual({
      usageBytes: 900,
      workingSetBytes: null,
      rssBytes: null,
      kernelBytes: null,
      activeFileBytes: null,
      shmemBytes: null,
      peakBytes: 1800,
      limitBytes: null,
      oomKills: 0,
      cpuSeconds: 1.5,
      limitHits: 0,
      stallMicros: { some: 1234, full: 567 },
    });
    expect(cg.oomKillRose()).toBe(false);
    write(slice, 5000, 1);
    expect(cg.oomKillRose()).toBe(true);
    expect(cg.oomKillRose()).toBe(false);
    // A restart: new scope, same slice.
    const cid2 = 'b'.repeat(64);
    mkdirSync(join(slice, containerScopeName(`containerd://${cid2}`)));
    expect(cg.setContainer(`containerd://${cid2}`)).toBe(join(slice, `cri-containerd-${cid2}.scope`));
    expect(cg.readPod()?.usageBytes).toBe(5000);
    expect(readCgroupMemory(join(node, 'gone'), 'v2')).toBeNull();
  });
});
