// Bystander pods in the sandbox: a second group of real pods beside the storm's, in their own
// cgroups, with their own UIDs and identity, listed by the kubelet, as the storm's uid or their own,
// and never churned.
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { parseCgroup } from '../../src/agent/index.js';
import { detectCgroupHost } from '../../src/cgroup/index.js';
import { createSandbox, newRunId, type Sandbox, type SandboxOptions, type SandboxPod } from '../../src/sandbox/index.js';
import { collector, realUid, waitFor } from './fixtures/pod-main.js';
import { skipNote } from '../support/skip-note.js';

const { host, reason } = detectCgroupHost();
if (!host) skipNote('every test of bystanders.slow.test.ts', reason);
const open: Sandbox[] = [];

async function sandbox(opts: Partial<SandboxOptions> = {}): Promise<Sandbox> {
  const sb = await createSandbox({ runId: newRunId('bystest'), pods: 2, ...opts });
  open.push(sb);
  return sb;
}

afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

interface ListedPod {
  metadata: { uid: string; name: string; labels: Record<string, string>; ownerReferences: Array<{ name: string }> };
  spec: { serviceAccountName: string };
}
async function listed(sb: Sandbox): Promise<ListedPod[]> {
  return ((await (await fetch(`${sb.kubeletUrl}/pods`)).json()) as { items: ListedPod[] }).items;
}

describe.skipIf(!host)(`sandbox bystander pods (${reason})`, () => {
  it('start after the storm pods, each in its own cgroup with its own UID, listed by the kubelet under their own ReplicaSet', async () => {
    const sb = await sandbox({ bystanders: { pods: 2 } });
    expect(sb.bystanderPods).toBe(2);
    const c = collector(sb);
    await sb.startPods(c.podMain);
    const pods = sb.pods();
    expect(pods.map((p) => [p.index, p.group])).toEqual([
      [0, 'storm'],
      [1, 'storm'],
      [2, 'bystanders'],
      [3, 'bystanders'],
    ]);
    expect(new Set(pods.map((p) => p.uid)).size).toBe(4);
    const items = await listed(sb);
    for (const pod of pods) {
      const r = await c.report(pod);
      expect(parseCgroup(r.cgroup)).toEqual({ podUID: pod.uid, containerID: pod.containerId });
      expect(r.env.ATTESTORM_POD_GROUP).toBe(pod.group);
      // uid "same" (the default): every pod runs as the storm's uid.
      expect(realUid(r.status)).toBe(process.getuid!());
      const item = items.find((i) => i.metadata.uid === pod.uid)!;
      expect(item, `kubelet lists ${pod.name}`).toBeDefined();
      if (pod.group === 'bystanders') {
        expect(item.metadata.name).toMatch(/^bystander-[a-z0-9]{10}-[a-z0-9]{5}$/);
        expect(item.metadata.labels).toMatchObject({ app: 'bystander' });
        expect(item.spec.serviceAccountName).toBe('bystander');
      } else {
        expect(item.metadata.labels).toMatchObject({ app: 'storm' });
        expect(item.spec.serviceAccountName).toBe('storm-worker');
      }
    }
    const owners = new Set(items.filter((i) => pods.some((p) => p.uid === i.metadata.uid)).map((i) => i.metadata.ownerReferences[0]!.name));
    expect(owners.size).toBe(2);
  });

  it('uid "own": bystander pods run as 30000+j, storm pods keep theirs', async () => {
    const sb = await sandbox({ pods: 1, bystanders: { pods: 2, uid: 'own' } });
    const c = collector(sb);
    await sb.startPods(c.podMain);
    const uids = await Promise.all(sb.pods().map(async (p) => [p.group, p.osUid, realUid((await c.report(p)).status)]));
    expect(uids).toEqual([
      ['storm', process.getuid!(), process.getuid!()],
      ['bystanders', 30000, 30000],
      ['bystanders', 30001, 30001],
    ]);
  });

  it('uid "same" with per-pod storm uids: bystanders share storm pod 0\'s uid', async () => {
    const sb = await sandbox({ pods: 2, uidMode: 'per-pod', bystanders: { pods: 1 } });
    const c = collector(sb);
    await sb.startPods(c.podMain);
    const uids = await Promise.all(sb.pods().map(async (p) => realUid((await c.report(p)).status)));
    expect(uids).toEqual([20000, 20001, 20000]);
  });

  it('churn replaces storm pods only: bystanders run on', async () => {
    const sb = await sandbox({ pods: 1, podLifetimeMs: 1000, bystanders: { pods: 1 }, kubelet: { visibilityDelayMs: 0 } });
    const c = collector(sb);
    const ended: SandboxPod[] = [];
    sb.on('pod-end', (p) => ended.push(p));
    await sb.startPods(c.podMain);
    const [storm, bystander] = sb.pods();
    await waitFor('the storm pod to be replaced twice', () => ended.filter((p) => p.group === 'storm').length >= 2);
    expect(ended.every((p) => p.group === 'storm')).toBe(true);
    expect(sb.pods().find((p) => p.group === 'bystanders')).toBe(bystander);
    expect(existsSync(bystander!.cgroup!.path)).toBe(true);
    expect(existsSync(storm!.cgroup!.path)).toBe(false);
    expect((await listed(sb)).map((i) => i.metadata.uid)).toContain(bystander!.uid);
    await sb.close();
    expect(existsSync(join(bystander!.cgroup!.path, '..'))).toBe(false);
  });
});
