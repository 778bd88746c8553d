// Reading a kind node's agent cgroup from the host. cgroup v1: real cgroups on this machine (a
// "node container" cgroup holding a process, the kubelet's systemd-driver slices below it, a real
// kernel OOM kill in the container scope). cgroup v2 (what kind on GitHub runners uses): this
// machine has no v2 memory controller, so a fixture tree with the v2 file formats.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmdirSync, writeFileSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectCgroupHost } from '../../src/cgroup/index.js';
import { containerScopeName, KindAgentCgroup, nodeCgroupRoot, podSliceCandidates, readCgroupMemory } from '../../src/kube/index.js';
import { skipNote } from '../support/skip-note.js';

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
    };
    write(slice, 1000, 0);
    write(scope1, 900, 0);
    const cg = new KindAgentCgroup({ version: 'v2', dir: node }, POD_UID);
    expect(cg.podSlice()).toBe(slice);
    cg.setContainer(`containerd://${CID}`);
    expect(cg.readContainer()).toEqual({ usageBytes: 900, peakBytes: 1800, limitBytes: null, oomKills: 0, cpuSeconds: 1.5 });
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

const { host, reason } = detectCgroupHost();
const v1 = host?.version === 'v1' ? host : null;
if (!v1) skipNote('kind cgroup tests on real v1 cgroups', reason || 'not a v1 memory hierarchy');

describe.skipIf(!v1)(`cgroup v1, real cgroups${v1 ? '' : ` (skipped: ${reason || 'not a v1 memory hierarchy'})`}`, () => {
  const created: string[] = [];
  afterAll(() => {
    for (const d of created.reverse()) {
      try {
        rmdirSync(d);
      } catch {
        // still has a process for a moment; the next cleanup takes it
      }
    }
  });

  it('finds the node cgroup from a process in it, reads the agent scope, and sees a real OOM kill rise oom_kill', async () => {
    const nodeDir = join(v1!.memoryBase, `attestorm-kindtest-${process.pid}`);
    const slice = join(nodeDir, podSliceCandidates(POD_UID)[1]!);
    const scope = join(slice, containerScopeName(`containerd://${CID}`));
    let d = nodeDir;
    created.push(d);
    mkdirSync(d);
    for (const part of [...podSliceCandidates(POD_UID)[1]!.split('/'), containerScopeName(`containerd://${CID}`)]) {
      d = join(d, part);
      mkdirSync(d);
      created.push(d);
    }
    // The "node container's init": a process in the node cgroup.
    const init = spawn('sleep', ['30'], { stdio: 'ignore' });
    writeFileSync(join(nodeDir, 'cgroup.procs'), String(init.pid));
    try {
      const root = nodeCgroupRoot(init.pid!);
      expect(root).toEqual({ version: 'v1', dir: nodeDir });
      const cg = new KindAgentCgroup(root, POD_UID);
      expect(cg.podSlice()).toBe(slice);
      expect(cg.setContainer(`containerd://${CID}`)).toBe(scope);
      writeFileSync(join(scope, 'memory.limit_in_bytes'), String(32 * 2 ** 20));
      try {
        writeFileSync(join(scope, 'memory.memsw.limit_in_bytes'), String(32 * 2 ** 20));
      } catch {
        // no swap accounting: the limit alone, swap is off on this machine
      }
      expect(cg.readContainer()).toMatchObject({ limitBytes: 32 * 2 ** 20, oomKills: 0 });
      expect(cg.oomKillRose()).toBe(false);
      // The "agent": a process in the container scope that allocates past the limit.
      const hog = spawnSync('sh', ['-c', `echo $$ > ${scope}/cgroup.procs && exec node -e "const a=[]; for(;;) a.push(Buffer.alloc(1<<20, 1))"`], {
        timeout: 30_000,
      });
      expect(hog.signal).toBe('SIGKILL');
      const after = cg.readContainer()!;
      expect(after.oomKills).toBeGreaterThanOrEqual(1);
      expect(after.peakBytes).toBeGreaterThan(16 * 2 ** 20);
      expect(cg.oomKillRose()).toBe(true);
      expect(readFileSync(join(scope, 'cgroup.procs'), 'utf8').trim()).toBe('');
    } finally {
      init.kill('SIGKILL');
      await new Promise((r) => init.once('exit', r));
    }
    expect(existsSync(scope)).toBe(true);
  }, 60_000);
});
