// The local cluster's host checks and leftover parsers, on fake hosts and captured /proc and
// iptables-save text; the PID ownership rule (PIDs wrap: a PID is ours only while it runs our binary).
import { describe, expect, it } from 'vitest';
import { hostProblems, type HostProbe } from '../../src/local-cluster/checks.js';
import { cgroupTree, firewallCleanupPlan, listeningPorts, mountsUnder, parseChains, parseMountinfo, splitRule } from '../../src/local-cluster/host-state.js';
import { isOurs, readState, writeState, type ProcReader } from '../../src/local-cluster/state.js';
import { restoreSysctls } from '../../src/local-cluster/sysctl.js';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const good: HostProbe = {
  platform: 'linux',
  uid: 0,
  has: () => true,
  exists: () => true,
  listening: new Set([22]),
  goVersion: 'go version go1.26.8 linux/amd64',
};
const needsAll = { build: true, pauseImage: true, baseImage: true, projectImage: true };

describe('cluster up checks', () => {
  it('pass on a host that has everything', () => {
    expect(hostProblems(good, needsAll)).toEqual([]);
  });
  it('name root, the runtime packages and the CNI plugins with what to install', () => {
    const p = hostProblems({ ...good, uid: 1000, has: (t) => !['containerd', 'runc'].includes(t), exists: (f) => !f.startsWith('/usr/lib/cni') }, needsAll);
    expect(p[0]).toMatch(/must run as root.*uid is 1000/);
    expect(p.filter((m) => m.includes('apt-get install containerd runc containernetworking-plugins'))).toHaveLength(5);
    expect(p.join('\n')).toContain('/usr/lib/cni/bridge');
  });
  it('ask for Go only when something must be built, and refuse an old one', () => {
    expect(hostProblems({ ...good, goVersion: null }, { ...needsAll, build: false, pauseImage: false })).toEqual([]);
    expect(hostProblems({ ...good, goVersion: null }, needsAll).join()).toMatch(/`go` is not on PATH.*1\.24/);
    expect(hostProblems({ ...good, goVersion: 'go version go1.19.8 linux/amd64' }, needsAll).join()).toMatch(/Go 1\.19 is too old/);
  });
  it('name a port in use and what may hold it', () => {
    expect(hostProblems({ ...good, listening: new Set([6443]) }, needsAll)).toEqual([
      expect.stringMatching(/port 6443 \(apiServer\) is in use.*attestorm cluster down/),
    ]);
  });
  it('ask for image tools only for images not cached', () => {
    const noTools = { ...good, has: (t: string) => !['buildah', 'skopeo', 'umoci', 'debootstrap', 'gcc'].includes(t) };
    expect(hostProblems(noTools, { build: false, pauseImage: false, baseImage: false, projectImage: false })).toEqual([]);
    expect(hostProblems(noTools, { build: false, pauseImage: false, baseImage: false, projectImage: true })).toEqual([
      expect.stringContaining('buildah'),
      expect.stringContaining('skopeo'),
    ]);
  });
  it('refuse other platforms outright', () => {
    expect(hostProblems({ ...good, platform: 'darwin' }, needsAll)).toEqual([expect.stringMatching(/Linux host; this is darwin/)]);
  });
});

describe('host parsers', () => {
  it('read mount points (escaped spaces) and order them deepest first', () => {
    const text = [
      '36 25 0:32 / /var/lib/attestorm/cluster/kubelet/pods/x/volumes/kubernetes.io~projected/kube-api-access rw - tmpfs tmpfs rw',
      '37 25 0:33 / /run/attestorm-cluster/containerd/io.containerd.runtime.v2.task/k8s.io/abc/rootfs rw - overlay overlay rw',
      '38 25 0:34 / /run/netns/cni-1234 rw - nsfs nsfs rw',
      '39 25 0:35 / /home/a\\040b rw - ext4 /dev/vda rw',
      '40 25 0:36 / /var/lib/attestorm/cluster-other rw - ext4 /dev/vda rw',
    ].join('\n');
    const mounts = parseMountinfo(text);
    expect(mounts[3]).toEqual({ mountPoint: '/home/a b', fsType: 'ext4', source: '/dev/vda' });
    expect(mountsUnder(mounts, ['/var/lib/attestorm/cluster', '/run/attestorm-cluster', '/run/netns/cni-1234'])).toEqual([
      '/var/lib/attestorm/cluster/kubelet/pods/x/volumes/kubernetes.io~projected/kube-api-access',
      '/run/attestorm-cluster/containerd/io.containerd.runtime.v2.task/k8s.io/abc/rootfs',
      '/run/netns/cni-1234',
    ]);
  });
  it('find listening ports in /proc/net/tcp', () => {
    const text = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:192B 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0
   1: 0100007F:C350 0100007F:192B 01 00000000:00000000 00:00000000 00000000     0        0 2 1 0 100 0 0 10 0`;
    expect([...listeningPorts(text)]).toEqual([6443]);
  });
  it('remove only the firewall chains added since the baseline, jumps into them first', () => {
    const save = `*filter
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:KUBE-FIREWALL - [0:0]
:KUBE-KUBELET-CANARY - [0:0]
:KUBE-OLD - [0:0]
-A INPUT -j KUBE-FIREWALL
-A OUTPUT -m comment --comment "kubernetes firewall for dropping marked packets" -j KUBE-FIREWALL
-A KUBE-FIREWALL -m mark --mark 0x8000/0x8000 -j DROP
COMMIT
*nat
:PREROUTING ACCEPT [0:0]
:KUBE-KUBELET-CANARY - [0:0]
COMMIT
`;
    expect(parseChains(save)).toContain('nat:KUBE-KUBELET-CANARY');
    const plan = firewallCleanupPlan(save, ['filter:INPUT', 'filter:OUTPUT', 'filter:KUBE-OLD', 'nat:PREROUTING']);
    expect(plan).toEqual([
      ['-t', 'filter', '-D', 'INPUT', '-j', 'KUBE-FIREWALL'],
      ['-t', 'filter', '-D', 'OUTPUT', '-m', 'comment', '--comment', 'kubernetes firewall for dropping marked packets', '-j', 'KUBE-FIREWALL'],
      ['-t', 'filter', '-F', 'KUBE-FIREWALL'],
      ['-t', 'filter', '-F', 'KUBE-KUBELET-CANARY'],
      ['-t', 'nat', '-F', 'KUBE-KUBELET-CANARY'],
      ['-t', 'filter', '-X', 'KUBE-FIREWALL'],
      ['-t', 'filter', '-X', 'KUBE-KUBELET-CANARY'],
      ['-t', 'nat', '-X', 'KUBE-KUBELET-CANARY'],
    ]);
    expect(firewallCleanupPlan(save, parseChains(save))).toEqual([]);
    expect(splitRule('X -m comment --comment "a \\"b\\" c" -j Y')).toEqual(['X', '-m', 'comment', '--comment', 'a "b" c', '-j', 'Y']);
  });
  it('walk a cgroup tree children first (rmdir order)', () => {
    const root = mkdtempSync(join(tmpdir(), 'cg-'));
    try {
      mkdirSync(join(root, 'kubepods/besteffort/podx'), { recursive: true });
      expect(cgroupTree(join(root, 'kubepods')).map((d) => d.slice(root.length))).toEqual(['/kubepods/besteffort/podx', '/kubepods/besteffort', '/kubepods']);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('state', () => {
  const stat = (start: string) => `123 (kube-apiserver) S 1 123 123 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 ${start} 0 0`;
  const proc = (exe: string | null, start: string): ProcReader => ({ exe: () => exe, stat: () => stat(start) });
  const d = { pid: 123, exe: '/c/k8s-v1.34.4/bin/kube-apiserver', startTime: '5000' };
  it('counts a PID as ours only while it runs the recorded binary since the recorded start', () => {
    expect(isOurs(d, proc('/c/k8s-v1.34.4/bin/kube-apiserver', '5000'))).toBe(true);
    expect(isOurs(d, proc('/c/k8s-v1.34.4/bin/kube-apiserver (deleted)', '5000'))).toBe(true);
    expect(isOurs(d, proc('/usr/bin/bash', '5000'))).toBe(false); // the PID wrapped
    expect(isOurs(d, proc('/c/k8s-v1.34.4/bin/kube-apiserver', '9000'))).toBe(false); // restarted by someone else
    expect(isOurs(d, proc(null, '5000'))).toBe(false);
  });
  it('is written atomically and read back; a damaged file reads as none', () => {
    const dir = mkdtempSync(join(tmpdir(), 'st-'));
    try {
      const file = join(dir, 'sub/state.json');
      const s = {
        version: 1 as const,
        startedAt: 'now',
        nodeName: 'n',
        kubeconfig: 'k',
        context: 'c',
        daemons: [],
        sysctls: { 'kernel.panic': '0' },
        firewallChains: { v4: [], v6: [] },
      };
      writeState(file, s);
      expect(readState(file)).toEqual(s);
      writeFileSync(file, '{');
      expect(readState(file)).toBeNull();
      expect(readState(join(dir, 'none.json'))).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it('restores the sysctls the kubelet changed, and only those', () => {
    const now: Record<string, string> = { '/proc/sys/vm/overcommit_memory': '1', '/proc/sys/kernel/panic': '0' };
    const written: string[] = [];
    const r = restoreSysctls(
      { 'vm.overcommit_memory': '0', 'kernel.panic': '0' },
      (p) => now[p]!,
      (p, v) => written.push(`${p}=${v.trim()}`),
    );
    expect(r).toEqual(['vm.overcommit_memory: 1 → 0']);
    expect(written).toEqual(['/proc/sys/vm/overcommit_memory=0']);
  });
});
