// Real pods in real cgroups: each pod's /proc/self/cgroup resolves to its UID and container ID
// through the agent's own parser, per-pod OS uids, churn, close(), a SIGKILLed owner and cleanup.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseCgroup } from '../../src/agent/index.js';
import { detectCgroupHost, type CgroupHost } from '../../src/cgroup/index.js';
import { cleanupLeftovers, createSandbox, newRunId, runTempDir, type Sandbox, type SandboxOptions, type SandboxPod } from '../../src/sandbox/index.js';
import { alive, collector, realUid, waitFor, type PodReport } from './fixtures/pod-main.js';
import { skipNote } from '../support/skip-note.js';

const { host, reason } = detectCgroupHost();
if (!host) skipNote('every test of sandbox.slow.test.ts', reason);
const open: Sandbox[] = [];

async function sandbox(opts: Partial<SandboxOptions> = {}): Promise<Sandbox> {
  const sb = await createSandbox({ runId: newRunId('sbtest'), pods: 2, ...opts });
  open.push(sb);
  return sb;
}

afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

function runRoots(h: CgroupHost, runId: string): string[] {
  return [join(h.memoryBase, 'attestorm', runId), ...(h.cpuBase ? [join(h.cpuBase, 'attestorm', runId)] : [])];
}

interface ListedPod {
  metadata: { uid: string; name: string; namespace: string };
  spec: { serviceAccountName: string };
  status: { containerStatuses: Array<{ containerID: string }> };
}
async function listed(sb: Sandbox): Promise<ListedPod[]> {
  const res = await fetch(`${sb.kubeletUrl}/pods`);
  return ((await res.json()) as { items: ListedPod[] }).items;
}

describe.skipIf(!host)(`sandbox with cgroups (${reason})`, () => {
  beforeAll(() => {
    expect(host!.version).toBe('v1'); // this machine; the assertions below read both v1 hierarchies
  });

  for (const [driver, qos, form] of [
    ['cgroupfs', 'besteffort', (p: SandboxPod) => `/kubepods/besteffort/pod${p.uid}/${p.containerId}`],
    ['cgroupfs', 'guaranteed', (p: SandboxPod) => `/kubepods/pod${p.uid}/${p.containerId}`],
    [
      'systemd',
      'besteffort',
      (p: SandboxPod) =>
        `/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod${p.uid.replaceAll('-', '_')}.slice/cri-containerd-${p.containerId}.scope`,
    ],
    [
      'systemd',
      'burstable',
      (p: SandboxPod) =>
        `/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${p.uid.replaceAll('-', '_')}.slice/cri-containerd-${p.containerId}.scope`,
    ],
  ] as const) {
    it(`${driver}/${qos}: a pod process's /proc/self/cgroup resolves to its pod UID and container ID`, async () => {
      const sb = await sandbox({ cgroupDriver: driver, qosClass: qos });
      expect(sb.fidelity).toBe('cgroup-pods');
      expect(sb.cgroupDriver).toBe(driver);
      const c = collector(sb);
      const started: string[] = [];
      sb.on('pod-start', (p) => started.push(p.uid));
      await sb.startPods(c.podMain);
      const pods = sb.pods();
      expect(pods).toHaveLength(2);
      expect(started).toEqual(pods.map((p) => p.uid));
      expect(new Set(pods.map((p) => p.uid)).size).toBe(2);
      const items = await listed(sb);
      for (const pod of pods) {
        const r: PodReport = await c.report(pod);
        expect(parseCgroup(r.cgroup)).toEqual({ podUID: pod.uid, containerID: pod.containerId });
        // Both the memory and the cpu line carry the kubelet-form path, as on a real node.
        const lines = r.cgroup.split('\n');
        expect(lines.find((l) => /^\d+:memory:/.test(l))).toMatch(new RegExp(`/attestorm/${sb.runId}${form(pod).replace(/[.]/g, '\\.')}$`));
        if (host!.cpuBase) expect(lines.find((l) => /^\d+:cpu:/.test(l))).toMatch(new RegExp(`${form(pod).replace(/[.]/g, '\\.')}$`));
        else skipNote("the pods' cpu cgroup line", 'no v1 cpu hierarchy');
        expect(pod.cgroup!.pids()).toContain(r.pid);
        expect(r.env).toMatchObject({
          ATTESTORM_POD_UID: pod.uid,
          ATTESTORM_POD_NAME: pod.name,
          ATTESTORM_CONTAINER_ID: pod.containerId,
          ATTESTORM_RUN_ID: sb.runId,
        });
        expect(realUid(r.status)).toBe(process.getuid!());
        // The kubelet lists the pod with the container ID its cgroup names.
        const item = items.find((i) => i.metadata.uid === pod.uid)!;
        expect(item.metadata.name).toBe(pod.name);
        expect(item.metadata.name).toMatch(/^storm-[a-z0-9]{10}-[a-z0-9]{5}$/);
        expect(item.spec.serviceAccountName).toBe('storm-worker');
        expect(item.status.containerStatuses[0]!.containerID).toBe(`containerd://${pod.containerId}`);
      }
    });
  }

  it('per-pod uid mode: each pod runs as uid/gid 20000+i, still in its cgroup', async () => {
    const sb = await sandbox({ uidMode: 'per-pod', pods: 3 });
    const c = collector(sb);
    await sb.startPods(c.podMain);
    for (const pod of sb.pods()) {
      const r = await c.report(pod);
      expect(pod.osUid).toBe(20000 + pod.index);
      expect(realUid(r.status)).toBe(20000 + pod.index);
      expect(Number(/^Gid:\s+(\d+)/m.exec(r.status)![1])).toBe(20000 + pod.index);
      expect(parseCgroup(r.cgroup)).toEqual({ podUID: pod.uid, containerID: pod.containerId });
    }
  });

  it('churn: pods end after their lifetime and are replaced by pods with new UIDs; old cgroups go', async () => {
    const sb = await sandbox({ podLifetimeMs: 1500, kubelet: { visibilityDelayMs: 0 } });
    const c = collector(sb);
    const ended: SandboxPod[] = [];
    sb.on('pod-end', (p) => ended.push(p));
    await sb.startPods(c.podMain);
    const first = sb.pods();
    const firstPids = await Promise.all(first.map(async (p) => (await c.report(p)).pid));
    await waitFor('both first pods to end', () => first.every((p) => ended.includes(p)));
    await waitFor('two replacement pods', () => sb.pods().length === 2 && sb.pods().every((p) => !first.includes(p)));
    const next = sb.pods();
    expect(next.map((p) => p.index).sort()).toEqual([0, 1]);
    for (const p of next) expect(first.map((f) => f.uid)).not.toContain(p.uid);
    for (const p of first) {
      expect(existsSync(p.cgroup!.path)).toBe(false);
      expect(existsSync(join(p.cgroup!.path, '..'))).toBe(false); // the pod<uid> level too
      if (p.cgroup!.cpuPath) expect(existsSync(p.cgroup!.cpuPath)).toBe(false);
      else skipNote("removal of replaced pods' cpu cgroups", 'pods have no cpu cgroup here');
    }
    for (const pid of firstPids) expect(alive(pid)).toBe(false);
    for (const p of next) expect(parseCgroup((await c.report(p)).cgroup).podUID).toBe(p.uid);
    const uids = (await listed(sb)).map((i) => i.metadata.uid);
    for (const p of first) expect(uids).not.toContain(p.uid);
  });

  it('a pod whose main process exits ends: its other processes are killed and its cgroup removed', async () => {
    const sb = await sandbox({ pods: 1 });
    const c = collector(sb, { grandchild: true });
    const ended: SandboxPod[] = [];
    sb.on('pod-end', (p) => ended.push(p));
    await sb.startPods(c.podMain);
    const [pod] = sb.pods();
    const r = await c.report(pod!);
    expect(pod!.cgroup!.pids()).toEqual(expect.arrayContaining([r.pid, r.grandchild]));
    process.kill(r.pid, 'SIGKILL');
    await waitFor('the pod to end', () => ended.length === 1);
    expect(sb.pods()).toEqual([]);
    expect(existsSync(pod!.cgroup!.path)).toBe(false);
    await waitFor('the grandchild to be gone', () => !alive(r.grandchild!), 5000);
  });

  it('churn: a main process that dies young is replaced by a new pod after a back-off', async () => {
    const sb = await sandbox({ pods: 1, podLifetimeMs: 60_000 });
    const starts: Array<{ uid: string; at: number }> = [];
    const ends: Array<{ uid: string; at: number }> = [];
    sb.on('pod-start', (p) => starts.push({ uid: p.uid, at: Date.now() }));
    sb.on('pod-end', (p) => ends.push({ uid: p.uid, at: Date.now() }));
    await sb.startPods((pod) =>
      sb.spawnInPod(pod, process.execPath, ['-e', "process.on('disconnect', () => process.exit(0)); setTimeout(() => process.exit(3), 200)"], {
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      }),
    );
    await waitFor('three generations of the crashing pod', () => starts.length >= 3, 20_000);
    expect(new Set(starts.map((s) => s.uid)).size).toBe(starts.length);
    // Each replacement waited at least the back-off (0.5 s, then 1 s) after its predecessor ended.
    const gap = (i: number) => starts[i]!.at - ends.find((e) => e.uid === starts[i - 1]!.uid)!.at;
    expect(gap(1)).toBeGreaterThanOrEqual(450);
    expect(gap(2)).toBeGreaterThanOrEqual(950);
    await sb.stopPods();
    const n = starts.length;
    await new Promise((r) => setTimeout(r, 1500));
    expect(starts.length).toBe(n); // no replacement after stopPods, not even a pending back-off
  });

  it('close() leaves no process, no cgroup and no temp file', async () => {
    const sb = await sandbox({ pods: 2, kubelet: { token: 'abc', tls: true }, cgroupDriver: 'systemd' });
    expect(readFileSync(sb.tokenFile!, 'utf8')).toBe('abc');
    expect(readFileSync(sb.caFile!, 'utf8')).toMatch(/BEGIN CERTIFICATE/);
    const c = collector(sb, { grandchild: true });
    await sb.startPods(c.podMain);
    const pids = (await Promise.all(sb.pods().map((p) => c.report(p)))).flatMap((r) => [r.pid, r.grandchild!]);
    expect(pids.every(alive)).toBe(true);
    await Promise.all([sb.close(), sb.close()]);
    await waitFor('every pod process to be gone', () => !pids.some(alive), 5000);
    for (const dir of runRoots(host!, sb.runId)) expect(existsSync(dir)).toBe(false);
    expect(existsSync(runTempDir(sb.runId))).toBe(false);
    await expect(fetch(`${sb.kubeletUrl}/pods`)).rejects.toThrow();
  });

  it('an owner killed with SIGKILL: its pods exit on IPC disconnect and cleanupLeftovers removes the rest', async () => {
    const owner = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'fixtures', 'sandbox-owner.ts'), 'systemd'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      owner.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) resolve(out.split('\n')[0]!);
      });
      owner.once('exit', (code) => reject(new Error(`owner exited early (${code})`)));
    });
    const made = JSON.parse(line) as { runId: string; pods: Array<PodReport & { uid: string; cgroup: string }>; tokenFile: string; caFile: string };
    expect(made.pods).toHaveLength(2);
    for (const p of made.pods) expect(parseCgroup(p.cgroup).podUID).toBe(p.uid);
    expect((await cleanupLeftovers({ dryRun: true })).filter((f) => f.includes(made.runId))).toEqual([]); // owner alive: not a leftover
    owner.kill('SIGKILL');
    await new Promise((r) => owner.once('exit', r));
    await waitFor('the pod main processes to exit on disconnect', () => made.pods.every((p) => !alive(p.pid)), 10_000);
    // The grandchildren ignore IPC: they and the cgroups are what is left behind.
    expect(made.pods.every((p) => alive(p.grandchild!))).toBe(true);
    const roots = runRoots(host!, made.runId);
    for (const dir of roots) expect(existsSync(dir)).toBe(true);
    const listedDry = await cleanupLeftovers({ dryRun: true });
    expect(listedDry).toEqual(expect.arrayContaining([...roots, runTempDir(made.runId)]));
    for (const dir of roots) expect(existsSync(dir)).toBe(true);
    const removed = await cleanupLeftovers();
    expect(removed).toEqual(expect.arrayContaining([...roots, runTempDir(made.runId)]));
    for (const dir of roots) expect(existsSync(dir)).toBe(false);
    expect(existsSync(runTempDir(made.runId))).toBe(false);
    await waitFor('the grandchildren to be killed', () => made.pods.every((p) => !alive(p.grandchild!)), 5000);
  });

  it('close() while pods are starting stops the start and leaves nothing', async () => {
    const sb = await sandbox({ pods: 4 });
    const c = collector(sb);
    const mains: number[] = [];
    const starting = sb.startPods((pod) => {
      const child = c.podMain(pod);
      mains.push(child.pid!);
      if (pod.index === 1) void sb.close();
      return child;
    });
    await starting.catch(() => {});
    await sb.close();
    expect(mains).toHaveLength(2); // no pod started after close()
    expect(sb.pods()).toEqual([]);
    await waitFor('the started mains to be gone', () => !mains.some(alive), 5000);
    for (const dir of runRoots(host!, sb.runId)) expect(existsSync(dir)).toBe(false);
  });

  it('cleanupLeftovers leaves a live run alone', async () => {
    const sb = await sandbox({ pods: 1 });
    const c = collector(sb);
    await sb.startPods(c.podMain);
    const removed = await cleanupLeftovers();
    expect(removed.filter((f) => f.includes(sb.runId))).toEqual([]);
    expect(existsSync(sb.pods()[0]!.cgroup!.path)).toBe(true);
    expect(alive((await c.report(sb.pods()[0]!)).pid)).toBe(true);
  });
});

describe('sandbox without cgroups (uid-only fidelity)', () => {
  it('an owner killed with SIGKILL: cleanupLeftovers finds the orphaned pod processes by their run id', async () => {
    const owner = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'fixtures', 'sandbox-owner.ts'), 'cgroupfs', 'never'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      owner.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) resolve(out.split('\n')[0]!);
      });
      owner.once('exit', (code) => reject(new Error(`owner exited early (${code})`)));
    });
    const made = JSON.parse(line) as { runId: string; fidelity: string; pods: PodReport[] };
    expect(made.fidelity).toBe('uid-only');
    expect((await cleanupLeftovers({ dryRun: true })).filter((f) => f.includes(made.runId))).toEqual([]);
    owner.kill('SIGKILL');
    await new Promise((r) => owner.once('exit', r));
    await waitFor('the pod main processes to exit on disconnect', () => made.pods.every((p) => !alive(p.pid)), 10_000);
    const orphans = made.pods.map((p) => p.grandchild!);
    expect(orphans.every(alive)).toBe(true);
    const dry = await cleanupLeftovers({ dryRun: true });
    for (const pid of orphans) expect(dry).toContain(`pid ${pid} (run ${made.runId})`);
    expect(orphans.every(alive)).toBe(true);
    const removed = await cleanupLeftovers();
    for (const pid of orphans) expect(removed).toContain(`pid ${pid} (run ${made.runId})`);
    expect(removed).toContain(runTempDir(made.runId));
    await waitFor('the orphans to be killed', () => !orphans.some(alive), 5000);
  });

  it('runs pods as plain processes, says so once, and kills each pod by its process group', async () => {
    const write = vi.spyOn(process.stderr, 'write');
    const sb = await sandbox({ useCgroups: 'never', pods: 2 });
    const sb2 = await sandbox({ useCgroups: 'never', pods: 1 });
    const warnings = write.mock.calls.filter(([s]) => String(s).includes('uid-only fidelity'));
    write.mockRestore();
    expect(warnings).toHaveLength(1);
    expect(sb.fidelity).toBe('uid-only');
    expect(sb2.fidelity).toBe('uid-only');
    expect(sb.cgroupVersion).toBeNull();
    const c = collector(sb, { grandchild: true });
    await sb.startPods(c.podMain);
    const reports = await Promise.all(sb.pods().map((p) => c.report(p)));
    for (const [i, pod] of sb.pods().entries()) {
      expect(pod.cgroup).toBeNull();
      expect(parseCgroup(reports[i]!.cgroup)).toEqual({ podUID: null, containerID: null });
      expect(reports[i]!.env.ATTESTORM_POD_UID).toBe(pod.uid);
    }
    await sb.stopPods();
    expect(sb.pods()).toEqual([]);
    await waitFor('every pod process, grandchildren included, to be gone', () => !reports.flatMap((r) => [r.pid, r.grandchild!]).some(alive), 5000);
    if (host) for (const dir of runRoots(host, sb.runId)) expect(existsSync(dir)).toBe(false);
    else skipNote("removal of the run's cgroups after stopPods", reason);
  });
});
