// The local cluster's rendered configuration: the settings this host needs (restrict_oom_score_adj,
// cgroupfs, no masquerade), the wrapper Go modules, and the PKI's names and groups.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { etcdWrapperGoMod, k8sLdflags, k8sWrapperGoMod, STAGING_MODULES, toolsGo } from '../../src/local-cluster/build.js';
import { makeClusterPki, subjectOf } from '../../src/local-cluster/certs.js';
import { clusterLayout, CONTEXT_NAME, PAUSE_IMAGE, PORTS } from '../../src/local-cluster/layout.js';
import { cniConfig, containerdConfig, daemonSpecs, kubeconfig, kubeletConfig } from '../../src/local-cluster/render-config.js';
import { digestOf, splitImage } from '../../src/local-cluster/images.js';

const l = clusterLayout({ ATTESTORM_CLUSTER_CACHE: '/c', ATTESTORM_CLUSTER_STATE: '/s', ATTESTORM_CLUSTER_RUN: '/r' }, 'Build_Host.example');

describe('layout', () => {
  it('keys the cache by version and keeps state and sockets apart', () => {
    expect(l.k8sDir).toBe('/c/k8s-v1.34.4');
    expect(l.etcdDir).toBe('/c/etcd-v3.6.16');
    expect(l.containerdSocket).toBe('/r/containerd.sock');
    expect(l.kubeconfig).toBe('/s/kubeconfig');
  });
  it('makes a DNS-1123 node name of any host name', () => {
    expect(l.nodeName).toBe('build-host.example');
    expect(clusterLayout({}, '__').nodeName).toBe('attestorm-node');
  });
});

describe('containerd config', () => {
  const toml = containerdConfig(l);
  it('has the settings this host needs', () => {
    expect(toml).toMatch(/^\s*restrict_oom_score_adj = true$/m);
    expect(toml).toMatch(/^\s*SystemdCgroup = false$/m);
    expect(toml).toContain(`sandbox_image = "${PAUSE_IMAGE}"`);
    expect(toml).toContain('stream_server_address = "127.0.0.1"');
    expect(toml).toContain('address = "/r/containerd.sock"');
    expect(toml).toContain('root = "/s/containerd"');
    expect(toml).toContain('conf_dir = "/s/cni"');
  });
});

describe('CNI config', () => {
  it('is a bridge with host-local IPAM, no masquerade, no default route', () => {
    const c = JSON.parse(cniConfig(l)) as { plugins: Array<Record<string, unknown>> };
    const bridge = c.plugins[0] as { type: string; ipMasq: boolean; ipam: { type: string; routes?: unknown; ranges: unknown; dataDir: string } };
    expect(bridge.type).toBe('bridge');
    expect(bridge.ipMasq).toBe(false);
    expect(bridge.ipam.type).toBe('host-local');
    expect(bridge.ipam.routes).toBeUndefined();
    expect(bridge.ipam.dataDir).toBe('/s/cni-ipam');
  });
});

describe('kubelet config', () => {
  const k = parse(kubeletConfig(l)) as Record<string, unknown>;
  it('uses cgroupfs, the own containerd socket, and never collects images', () => {
    expect(k.cgroupDriver).toBe('cgroupfs');
    expect(k.containerRuntimeEndpoint).toBe('unix:///r/containerd.sock');
    expect(k.failSwapOn).toBe(false);
    expect(k.imageGCHighThresholdPercent).toBe(100);
    expect(k.address).toBe('127.0.0.1');
    expect((k.evictionHard as Record<string, string>)['memory.available']).toBe('50Mi');
    expect((k.authentication as { anonymous: { enabled: boolean } }).anonymous.enabled).toBe(false);
  });
});

describe('daemons', () => {
  const specs = daemonSpecs(l);
  it('start in dependency order, all at nice 0 (pods inherit containerd’s)', () => {
    expect(specs.map((s) => s.name)).toEqual(['containerd', 'etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubelet']);
    expect(specs.every((s) => s.nice === 0)).toBe(true);
  });
  it('listen on loopback only', () => {
    const api = specs.find((s) => s.name === 'kube-apiserver')!.args;
    expect(api).toContain('--bind-address=127.0.0.1');
    expect(api).toContain(`--secure-port=${PORTS.apiServer}`);
    expect(api).toContain('--authorization-mode=Node,RBAC');
    expect(api.some((a) => a.startsWith('--kubelet-client-certificate='))).toBe(true);
    expect(api.some((a) => a.startsWith('--requestheader-client-ca-file='))).toBe(true);
    expect(specs.find((s) => s.name === 'etcd')!.args).toContain(`--listen-client-urls=http://127.0.0.1:${PORTS.etcdClient}`);
    expect(specs.find((s) => s.name === 'kube-controller-manager')!.args).toContain('--controllers=*,-nodeipam');
  });
});

describe('kubeconfig', () => {
  it('has the named context, current, against loopback', () => {
    const k = parse(kubeconfig('CA', { name: 'u', certPem: 'C', keyPem: 'K' })) as {
      'current-context': string;
      clusters: Array<{ cluster: { server: string; 'certificate-authority-data': string } }>;
      contexts: Array<{ name: string }>;
    };
    expect(k['current-context']).toBe(CONTEXT_NAME);
    expect(k.contexts.map((c) => c.name)).toEqual([CONTEXT_NAME]);
    expect(k.clusters[0]!.cluster.server).toBe('https://127.0.0.1:6443');
    expect(Buffer.from(k.clusters[0]!.cluster['certificate-authority-data'], 'base64').toString()).toBe('CA');
  });
});

describe('wrapper Go modules', () => {
  it('replace every staging module with its published version', () => {
    const mod = k8sWrapperGoMod('v1.34.4', 'v0.34.4');
    expect(mod).toContain('require k8s.io/kubernetes v1.34.4');
    expect(STAGING_MODULES).toHaveLength(31);
    for (const m of STAGING_MODULES) expect(mod).toContain(`\tk8s.io/${m} => k8s.io/${m} v0.34.4\n`);
    expect(etcdWrapperGoMod('v3.6.16')).toContain('require go.etcd.io/etcd/server/v3 v3.6.16');
    expect(toolsGo(['a/b'])).toMatch(/^\/\/go:build tools\n[\s\S]*_ "a\/b"/);
  });
  it('link the version in, for both version packages', () => {
    const ld = k8sLdflags('v1.34.4');
    for (const pkg of ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version']) {
      expect(ld).toContain(`-X ${pkg}.gitVersion=v1.34.4`);
      expect(ld).toContain(`-X ${pkg}.gitMinor=34`);
    }
    expect(() => k8sLdflags('1.34')).toThrow(/v1\.34\.4/);
  });
});

describe('images', () => {
  it('splits a normalised name into ctr import’s base name and tag', () => {
    expect(splitImage('docker.io/library/attestorm:dev')).toEqual({ base: 'docker.io/library/attestorm', tag: 'dev' });
    expect(() => splitImage('localhost:5000/x')).toThrow(/needs a tag/);
  });
  it('finds an image’s manifest digest in ctr images ls', () => {
    const ls = `REF                             TYPE                                       DIGEST                                                                  SIZE      PLATFORMS   LABELS
docker.io/library/attestorm:dev application/vnd.oci.image.manifest.v1+json sha256:b43da8643a738ef9c713f62ce39156cd807c7340e7121a728088a4e0834949e8 134.8 MiB linux/amd64 -
sha256:46126d79bfcca0fb509bce26 application/vnd.oci.image.manifest.v1+json sha256:b43da8643a738ef9c713f62ce39156cd807c7340e7121a728088a4e0834949e8 134.8 MiB linux/amd64 -`;
    expect(digestOf(ls, 'docker.io/library/attestorm:dev')).toBe('sha256:b43da8643a738ef9c713f62ce39156cd807c7340e7121a728088a4e0834949e8');
    expect(digestOf(ls, 'docker.io/library/other:dev')).toBeNull();
  });
});

describe('PKI', () => {
  it('gives each component its identity, the admin system:masters, the serving certs their names', async () => {
    const pki = await makeClusterPki('node-a');
    const cert = (n: string) => new x509.X509Certificate(pki[n]!.certPem);
    expect(cert('admin').subject).toBe('CN=attestorm-admin, O=system:masters');
    expect(cert('kubelet-client').subject).toBe('CN=system:node:node-a, O=system:nodes');
    expect(cert('controller-manager').subject).toBe('CN=system:kube-controller-manager');
    const san = cert('apiserver').getExtension(x509.SubjectAlternativeNameExtension)!;
    const names = san.names.items.map((n) => n.value);
    expect(names).toEqual(expect.arrayContaining(['127.0.0.1', 'localhost', 'node-a', 'kubernetes.default.svc', '10.96.0.1']));
    expect(await cert('apiserver').verify({ publicKey: cert('ca').publicKey, signatureOnly: true })).toBe(true);
    expect(await cert('front-proxy-client').verify({ publicKey: cert('front-proxy-ca').publicKey, signatureOnly: true })).toBe(true);
    expect(pki.sa!.certPem).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    expect(subjectOf({ cn: 'x', orgs: ['a', 'b'] })).toBe('CN=x, O=a, O=b');
  });
});
