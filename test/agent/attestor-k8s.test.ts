import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { AttestationError, createAttestors } from '../../src/agent/attestor.js';
import { createK8sAttestorWith } from '../../src/agent/attestor-k8s.js';
import { parseAgentConfig } from '../../src/agent/config.js';
import { createKubeletClient, type KubeletClient } from '../../src/agent/kubelet-client.js';
import type { Attestor, CallerCreds } from '../../src/agent/types.js';
import { makePod, startFakeKubelet, type FakeKubelet } from './fake-kubelet.js';
import { skipNote } from '../support/skip-note.js';

const UID = '2c48913c-b29f-11e7-9350-020968147796';
const CID = '9bca8d63d5fa610783847915bcff0ecac1273e5b4bed3f6fa1b07350e0135961';
const INIT_CID = '1111111111111111111111111111111111111111111111111111111111111111';
const OTHER_CID = 'abcdefabcdefabcdefabcdefabcdefabcdefabcdefabcdefabcdefabcdefabcd';

const tmp = mkdtempSync(join(tmpdir(), 'attestorm-k8s-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const open: { kubelets: FakeKubelet[]; attestors: Attestor[] } = { kubelets: [], attestors: [] };
afterEach(async () => {
  for (const a of open.attestors.splice(0)) a.close?.();
  await Promise.all(open.kubelets.splice(0).map((k) => k.close()));
});

/** FAKE proc root: /<pid>/cgroup with the text a kubelet-managed process would show. */
function procWith(cgroups: Record<number, string>): string {
  const root = mkdtempSync(join(tmp, 'proc-'));
  for (const [pid, text] of Object.entries(cgroups)) {
    mkdirSync(join(root, pid));
    writeFileSync(join(root, pid, 'cgroup'), text);
  }
  return root;
}

const creds = (pid: number): CallerCreds => ({ pid, uid: 0, gid: 0, startTime: null });

function apiPod() {
  return makePod({
    uid: UID,
    name: 'api-7d9f8b6c5-x2x4z',
    namespace: 'shop',
    serviceAccount: 'api',
    nodeName: 'worker-3',
    labels: { app: 'api', 'pod-template-hash': '7d9f8b6c5' },
    owners: [{ kind: 'ReplicaSet', name: 'api-7d9f8b6c5', uid: '0d6e3c1a-9b8f-4e7d-a6c5-b4a3f2e1d0c9' }],
    containers: [
      { name: 'api', image: 'registry.local/api:1.4', imageID: 'registry.local/api@sha256:aa11', containerID: `containerd://${CID}` },
      { name: 'envoy', image: 'envoyproxy/envoy:v1.30', imageID: 'envoyproxy/envoy@sha256:bb22', containerID: `containerd://${OTHER_CID}` },
    ],
    initContainers: [
      { name: 'migrate', image: 'registry.local/migrate:2', imageID: 'registry.local/migrate@sha256:cc33', containerID: `containerd://${INIT_CID}` },
    ],
  });
}

async function setup(cgroups: Record<number, string>, kubeletOver: Partial<Parameters<typeof createKubeletClient>[0]> = {}) {
  const kubelet = await startFakeKubelet();
  open.kubelets.push(kubelet);
  const client: KubeletClient = createKubeletClient({ url: kubelet.url, timeoutMs: 1000, pollIntervalMs: 20, maxPollAttempts: 5, ...kubeletOver });
  const attestor = createK8sAttestorWith({ procRoot: procWith(cgroups), kubelet: client });
  open.attestors.push(attestor);
  return { kubelet, attestor };
}

const values = (sel: { type: string; value: string }[]) => sel.map((s) => `${s.type}:${s.value}`);

describe('k8s attestor', () => {
  it("produces the exact selectors of the caller's container (cgroupfs form)", async () => {
    const { kubelet, attestor } = await setup({ 100: `11:memory:/kubepods/burstable/pod${UID}/${CID}\n0::/\n` });
    kubelet.pods = [makePod({ uid: 'f0000000-0000-0000-0000-000000000000', name: 'other' }), apiPod()];
    expect(values(await attestor.attest(creds(100)))).toEqual([
      'k8s:ns:shop',
      'k8s:sa:api',
      'k8s:node-name:worker-3',
      `k8s:pod-uid:${UID}`,
      'k8s:pod-name:api-7d9f8b6c5-x2x4z',
      'k8s:pod-image:registry.local/api:1.4',
      'k8s:pod-image:registry.local/api@sha256:aa11',
      'k8s:pod-image:envoyproxy/envoy:v1.30',
      'k8s:pod-image:envoyproxy/envoy@sha256:bb22',
      'k8s:pod-image-count:2',
      'k8s:pod-init-image:registry.local/migrate:2',
      'k8s:pod-init-image:registry.local/migrate@sha256:cc33',
      'k8s:pod-init-image-count:1',
      'k8s:pod-label:app:api',
      'k8s:pod-label:pod-template-hash:7d9f8b6c5',
      'k8s:pod-owner:ReplicaSet:api-7d9f8b6c5',
      'k8s:pod-owner-uid:ReplicaSet:0d6e3c1a-9b8f-4e7d-a6c5-b4a3f2e1d0c9',
      'k8s:container-name:api',
      'k8s:container-image:registry.local/api:1.4',
      'k8s:container-image:registry.local/api@sha256:aa11',
    ]);
  });

  it('systemd slices and an init container', async () => {
    const path = `/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${UID.replaceAll('-', '_')}.slice/cri-containerd-${INIT_CID}.scope`;
    const { kubelet, attestor } = await setup({ 101: `0::${path}\n` });
    kubelet.pods = [apiPod()];
    const got = values(await attestor.attest(creds(101)));
    expect(got).toContain('k8s:container-name:migrate');
    expect(got).toContain('k8s:container-image:registry.local/migrate@sha256:cc33');
    expect(got).not.toContain('k8s:container-name:api');
  });

  it('cri-o without a pod UID: found by container ID alone', async () => {
    const { kubelet, attestor } = await setup({ 102: `0::/crio-${OTHER_CID}.scope\n` });
    kubelet.pods = [apiPod()];
    const got = values(await attestor.attest(creds(102)));
    expect(got).toContain('k8s:container-name:envoy');
    expect(got).toContain(`k8s:pod-uid:${UID}`);
  });

  it('not in a pod: no selectors and no kubelet request', async () => {
    const { kubelet, attestor } = await setup({ 103: '0::/user.slice/user-0.slice/session-1.scope\n' });
    expect(await attestor.attest(creds(103))).toEqual([]);
    expect(kubelet.requests).toHaveLength(0);
  });

  it('pod listed before its container status: keeps polling until the status appears', async () => {
    const { kubelet, attestor } = await setup({ 104: `0::/kubepods/pod${UID}/${CID}\n` }, { maxPollAttempts: 50 });
    const early = apiPod();
    early.status = { containerStatuses: [{ name: 'api', image: 'registry.local/api:1.4' }] }; // no containerID yet
    kubelet.pods = [early];
    const pending = attestor.attest(creds(104));
    while (kubelet.requests.length < 2) await new Promise((r) => setTimeout(r, 5));
    kubelet.pods = [apiPod()];
    expect(values(await pending)).toContain('k8s:container-name:api');
  });

  it('a container ID under another pod UID is not accepted; gives up with the documented error', async () => {
    const { kubelet, attestor } = await setup({ 105: `0::/kubepods/pod5f1e0c2a-0d3b-4a8e-9b7c-6d5e4f3a2b1c/${CID}\n` }, { maxPollAttempts: 3 });
    kubelet.pods = [apiPod()];
    const err = await attestor.attest(creds(105)).catch((e) => e);
    expect(err).toBeInstanceOf(AttestationError);
    expect(err.reason).toBe('pod-not-found');
    expect(err.message).toBe(`k8s attestor: container ${CID} of pod 5f1e0c2a-0d3b-4a8e-9b7c-6d5e4f3a2b1c not found in kubelet pod list after 3 attempts`);
    expect(kubelet.requests).toHaveLength(3);
  });

  it('kubelet down / invalid JSON: kubelet-unavailable; process gone: process-gone', async () => {
    const { kubelet, attestor } = await setup({ 106: `0::/kubepods/pod${UID}/${CID}\n` });
    kubelet.handler = (_req, res) => res.writeHead(200).end('<html>');
    const err = await attestor.attest(creds(106)).catch((e) => e);
    expect(err).toBeInstanceOf(AttestationError);
    expect(err.reason).toBe('kubelet-unavailable');
    expect(err.message).toMatch(/not JSON/);
    const gone = await attestor.attest(creds(999_999)).catch((e) => e);
    expect(gone.reason).toBe('process-gone');
  });

  it('from config: node-name override, kubelet fetch hook', async () => {
    const kubelet = await startFakeKubelet();
    open.kubelets.push(kubelet);
    kubelet.pods = [apiPod()];
    const fetches: [string, number][] = [];
    const cfg = parseAgentConfig({
      attestors: ['k8s'],
      procRoot: procWith({ 107: `0::/kubepods/pod${UID}/${CID}\n` }),
      k8s: { kubeletUrl: kubelet.url, nodeName: 'from-config' },
    });
    const [k8s] = createAttestors(cfg, { onKubeletFetch: (o, b) => fetches.push([o, b]) });
    open.attestors.push(k8s!);
    expect(values(await k8s!.attest(creds(107)))).toContain('k8s:node-name:from-config');
    expect(fetches).toHaveLength(1);
    expect(fetches[0]![0]).toBe('ok');
    expect(fetches[0]![1]).toBeGreaterThan(500);
  });
});

describe('k8s attestor on a real cgroup and the real /proc', () => {
  // Nest a kubelet-shaped path under this process's own memory cgroup (cgroup v1) and move a real
  // child into it, so the attestor reads what the kernel writes in /proc/<pid>/cgroup.
  const own = readFileSync('/proc/self/cgroup', 'utf8')
    .split('\n')
    .find((l) => /^\d+:memory:/.test(l));
  const base = own ? join('/sys/fs/cgroup/memory', own.split(':')[2]!) : null;
  let canCreate = false;
  const probe = base && join(base, `attestorm-k8s-probe-${process.pid}`);
  try {
    if (probe) {
      mkdirSync(probe);
      rmdirSync(probe);
      canCreate = true;
    }
  } catch {
    canCreate = false;
  }
  if (!canCreate) skipNote('k8s attestor on a real cgroup', base ? `cannot create a cgroup under ${base}` : 'no cgroup v1 memory line in /proc/self/cgroup');

  it.skipIf(!canCreate)('attests a child moved into /kubepods/besteffort/pod<uid>/<cid> (skipped without a writable cgroup v1 memory hierarchy)', async () => {
    const top = join(base!, `attestorm-k8s-test-${process.pid}`);
    const dirs = [top, join(top, 'kubepods'), join(top, 'kubepods', 'besteffort'), join(top, 'kubepods', 'besteffort', `pod${UID}`)];
    dirs.push(join(dirs[3]!, CID));
    for (const d of dirs) mkdirSync(d);
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      await new Promise((r) => child.once('spawn', r));
      writeFileSync(join(dirs[4]!, 'cgroup.procs'), String(child.pid));
      const kubelet = await startFakeKubelet();
      open.kubelets.push(kubelet);
      kubelet.pods = [apiPod()];
      const client = createKubeletClient({ url: kubelet.url, timeoutMs: 1000, pollIntervalMs: 20, maxPollAttempts: 3 });
      const attestor = createK8sAttestorWith({ procRoot: '/proc', kubelet: client });
      open.attestors.push(attestor);
      const got = values(await attestor.attest(creds(child.pid!)));
      expect(got).toContain(`k8s:pod-uid:${UID}`);
      expect(got).toContain('k8s:container-name:api');
    } finally {
      child.kill('SIGKILL');
      await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r(null) : child.once('exit', r)));
      for (const d of dirs.reverse()) {
        for (let i = 0; i < 50; i++) {
          try {
            rmdirSync(d);
            break;
          } catch {
            await new Promise((r) => setTimeout(r, 20)); // the kernel frees the cgroup shortly after exit
          }
        }
      }
    }
  });
});
