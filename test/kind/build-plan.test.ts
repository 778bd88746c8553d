// What `kind up` says it will build on a fresh machine before it builds anything: every input of
// the node image the shared cache lacks (etcd and the Kubernetes binaries `cluster up` builds
// too, CoreDNS, the base rootfs), with the time each takes, and fewer steps as the cache fills.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KIND_VERSIONS, kindLayout, nodeImageKey, nodeImageSteps } from '../../src/kind/index.js';
import { clusterLayout, planLine, roughly, timedStep } from '../../src/local-cluster/index.js';

const dir = mkdtempSync(join(tmpdir(), 'attestorm-build-plan-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function caches(name: string) {
  const env = { ATTESTORM_CLUSTER_CACHE: join(dir, name, 'cluster'), ATTESTORM_KIND_CACHE: join(dir, name, 'kind') };
  return { cl: clusterLayout(env), l: kindLayout(env) };
}

function touch(file: string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, '');
}

describe("the node image's build plan", () => {
  it('on an empty cache names every input, etcd first, then the Kubernetes modules and each command, CoreDNS, the base and the node', () => {
    const { cl, l } = caches('empty');
    const steps = nodeImageSteps(l, nodeImageKey(), cl).map((s) => s.what);
    expect(steps[0]).toMatch(/^the node's base rootfs \(debootstrap bookworm/);
    expect(steps[1]).toBe(`etcd ${KIND_VERSIONS.etcd} from go.etcd.io/etcd/server/v3`);
    expect(steps[2]).toMatch(/^the Kubernetes v1\.34\.4 modules/);
    expect(steps.slice(3, 10)).toEqual(
      ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubelet', 'kubeadm', 'kubectl', 'kube-proxy'].map((c) => `Kubernetes v1.34.4 ${c}`),
    );
    expect(steps[10]).toMatch(/^CoreDNS v1\.12\.1/);
    expect(steps[11]).toMatch(/^the node image/);
    expect(steps).toHaveLength(12);
  });

  it('leaves out what the shared cache holds: etcd and the binaries `cluster up` built, and CoreDNS', () => {
    const { cl, l } = caches('warm');
    touch(join(cl.etcdDir, 'bin', 'etcd'));
    for (const c of ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubelet']) touch(join(cl.k8sDir, 'bin', c));
    touch(join(l.cacheDir, `coredns-${KIND_VERSIONS.coredns}`, 'bin', 'coredns'));
    const steps = nodeImageSteps(l, nodeImageKey(), cl).map((s) => s.what);
    expect(steps.filter((s) => s.startsWith('Kubernetes'))).toEqual([
      'Kubernetes v1.34.4 kubeadm',
      'Kubernetes v1.34.4 kubectl',
      'Kubernetes v1.34.4 kube-proxy',
    ]);
    expect(steps.some((s) => s.startsWith('etcd') || s.startsWith('CoreDNS'))).toBe(false);
  });

  it('says the whole wait and each part in one line, and nothing when nothing is missing', () => {
    const line = planLine('the kind node image x', [
      { what: 'etcd', seconds: 60 },
      { what: 'kube-apiserver', seconds: 360 },
    ]);
    expect(line).toBe(
      'the kind node image x is not cached: building it once here, about 7 min on 2 idle cores (up to twice that on a busy machine): 1. etcd (about 60 s); 2. kube-apiserver (about 6 min)',
    );
    expect(planLine('anything', [])).toBeNull();
    expect(roughly(3)).toBe('about 10 s');
  });

  it('a step says what it builds and how long it takes before, and the time it took after', async () => {
    const lines: string[] = [];
    const out = await timedStep(
      (s) => lines.push(s),
      { what: 'etcd v3.6.16', seconds: 60 },
      () => Promise.resolve(42),
    );
    expect(out).toBe(42);
    expect(lines[0]).toBe('building etcd v3.6.16 (about 60 s cold)');
    expect(lines[1]).toMatch(/^built etcd v3\.6\.16 in \d+ s$/);
  });
});
