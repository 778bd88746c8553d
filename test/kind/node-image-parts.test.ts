// The pieces of kind mode's local node image that can be checked without building it: the runc
// capability filter run for real (sh and jq, a recording runtime in place of runc), the edits to
// kind's containerd config, the pod-network manifest as kind fills it in, the cluster config.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { capsInMask, containerdConfig, criBaseSpec, podNetworkManifest, routesScript, runcCapsScript } from '../../src/kind/index.js';
import { kindConfig } from '../../src/kind/index.js';
import { platformFact } from '../../src/report/derive.js';
import { onPath } from '../../src/local-cluster/index.js';

const ROOT = join(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'attestorm-kind-parts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the runc capability filter', () => {
  it('reads a CapBnd mask bit by bit: CAP_SYS_RESOURCE (24) missing from this kind of VM', () => {
    const caps = capsInMask('000001fffeffffff');
    expect(caps).toHaveLength(40);
    expect(caps).not.toContain('CAP_SYS_RESOURCE');
    expect(caps).toContain('CAP_SYS_ADMIN');
    expect(capsInMask('0')).toEqual([]);
    expect(() => capsInMask('zz')).toThrow(/CapBnd must be a hex mask, got "zz"/);
  });

  it.skipIf(!onPath('jq'))('drops from create and exec what the bounding set lacks, then runs the runtime with the same arguments', () => {
    const ownMask = /^CapBnd:\s*([0-9a-f]+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))![1]!;
    const allowed = capsInMask(ownMask);
    const record = join(dir, 'runtime-args');
    const runtime = join(dir, 'recording-runtime');
    writeFileSync(runtime, `#!/bin/sh\necho "$@" > ${record}\n`);
    chmodSync(runtime, 0o755);
    const wrapper = join(dir, 'runc-caps');
    writeFileSync(wrapper, runcCapsScript(runtime));
    chmodSync(wrapper, 0o755);
    const asked = ['CAP_CHOWN', 'CAP_SYS_RESOURCE', 'CAP_NET_ADMIN', 'CAP_CHECKPOINT_RESTORE'];
    const bundle = join(dir, 'bundle');
    mkdirSync(bundle);
    writeFileSync(join(bundle, 'config.json'), JSON.stringify({ ociVersion: '1.0.2', process: { capabilities: { bounding: asked, effective: asked } } }));
    execFileSync(wrapper, ['--root', '/x', 'create', '--bundle', bundle, 'id1']);
    const config = JSON.parse(readFileSync(join(bundle, 'config.json'), 'utf8'));
    const kept = asked.filter((c) => allowed.includes(c));
    expect(config.process.capabilities).toEqual({ bounding: kept, effective: kept });
    expect(config.ociVersion).toBe('1.0.2');
    expect(readFileSync(record, 'utf8').trim()).toBe(`--root /x create --bundle ${bundle} id1`);

    const processFile = join(dir, 'process.json');
    writeFileSync(processFile, JSON.stringify({ args: ['sh'], capabilities: { permitted: asked } }));
    execFileSync(wrapper, ['exec', '--process', processFile, 'id1']);
    expect(JSON.parse(readFileSync(processFile, 'utf8')).capabilities).toEqual({ permitted: kept });
    // Other commands pass through untouched.
    execFileSync(wrapper, ['state', 'id1']);
    expect(readFileSync(record, 'utf8').trim()).toBe('state id1');
  });
});

const KIND_CONTAINERD = `version = 2

[proxy_plugins]
# fuse-overlayfs is used for rootless
[proxy_plugins."fuse-overlayfs"]
  type = "snapshot"
  address = "/run/containerd-fuse-overlayfs.sock"

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
    SystemdCgroup = true

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.10"
  restrict_oom_score_adj = false
`;

describe("kind's containerd config, as the node image changes it", () => {
  it('runc behind the filter, no OOM score writes, the pause image kubeadm 1.34 names, no rootless proxy plugin', () => {
    const out = containerdConfig(KIND_CONTAINERD);
    expect(out).toContain(
      '  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]\n    BinaryName = "/usr/local/sbin/runc-caps"\n    SystemdCgroup = true',
    );
    expect(out).toContain('restrict_oom_score_adj = true');
    expect(out).toContain('sandbox_image = "registry.k8s.io/pause:3.10.1"');
    expect(out).not.toContain('proxy_plugins');
  });

  it('a config that lacks what is edited is refused by name, not passed on half-changed', () => {
    expect(() => containerdConfig(KIND_CONTAINERD.replace('restrict_oom_score_adj = false', ''))).toThrow(
      /containerd config changed: restrict_oom_score_adj not found/,
    );
  });

  it("the base runtime spec gets kind's product_uuid hook and loses rlimits", () => {
    const spec = JSON.parse(
      criBaseSpec(JSON.stringify({ process: { rlimits: [{ type: 'RLIMIT_NOFILE' }], args: ['sh'] }, hooks: { createContainer: [{ path: '/a' }] } })),
    );
    expect(spec.process).toEqual({ args: ['sh'] });
    expect(spec.hooks.createContainer).toEqual([{ path: '/a' }, { path: '/kind/bin/mount-product-files.sh' }]);
  });
});

describe('the pod network in kind’s default-cni slot', () => {
  it('carries both of kind’s markers and is valid Kubernetes YAML once kind fills in the pod subnet', () => {
    const raw = podNetworkManifest('localhost/attestorm-kind-routes:abc');
    expect(raw).toContain('would you kindly template this file');
    expect(raw).toContain('would you kindly patch this file');
    const docs = parseAllDocuments(raw.replace('{{ .PodSubnet }}', '10.244.0.0/16')).map((d) => d.toJS());
    expect(docs.map((d) => d.kind)).toEqual(['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'DaemonSet']);
    const ds = docs[3];
    const c = ds.spec.template.spec.containers[0];
    // kind appends CONTROL_PLANE_ENDPOINT to the first container's env list: it must exist.
    expect(c.env.map((e: { name: string }) => e.name)).toEqual(['NODE_NAME', 'POD_SUBNET']);
    expect(c.env[1].value).toBe('10.244.0.0/16');
    expect(c.image).toBe('localhost/attestorm-kind-routes:abc');
    expect(ds.spec.template.spec.hostNetwork).toBe(true);
  });

  it.skipIf(!onPath('bash'))('the routes script is valid bash and writes a CNI config that parses as JSON', () => {
    const script = join(dir, 'routes.sh');
    writeFileSync(script, routesScript());
    execFileSync('bash', ['-n', script]);
    const conf = /want=\$\(printf '([^']+)'/.exec(routesScript())![1]!.replace('%s', '10.244.1.0/24');
    const parsed = JSON.parse(conf);
    expect(parsed.plugins[0].type).toBe('ptp');
    expect(parsed.plugins[0].ipam.ranges[0][0].subnet).toBe('10.244.1.0/24');
  });
});

describe('the kind cluster config', () => {
  it('one node by default; --nodes 3 is a control plane and two workers, each of the node image', () => {
    const one = parseAllDocuments(kindConfig('a', 'img:1')).map((d) => d.toJS());
    expect(one).toHaveLength(1);
    expect(one[0]).toMatchObject({ kind: 'Cluster', apiVersion: 'kind.x-k8s.io/v1alpha4', name: 'a', nodes: [{ role: 'control-plane', image: 'img:1' }] });
    const docs = parseAllDocuments(kindConfig('b', 'img:1', 3)).map((d) => d.toJS());
    expect(docs[0].nodes).toEqual([
      { role: 'control-plane', image: 'img:1' },
      { role: 'worker', image: 'img:1' },
      { role: 'worker', image: 'img:1' },
    ]);
  });

  it("lets the kubelet start on a cgroup v1 host, as the workflow's kind config does", () => {
    const patches = (parseAllDocuments(kindConfig('a')).map((d) => d.toJS())[0].kubeadmConfigPatches as string[]).map((p) => parse(p));
    expect(patches).toEqual([{ kind: 'KubeletConfiguration', failCgroupV1: false }]);
    const workflows = parse(readFileSync(join(ROOT, '.github/kind-cluster.yaml'), 'utf8'));
    expect(workflows.kubeadmConfigPatches.map((p: string) => parse(p))).toEqual(patches);
    expect(workflows).toMatchObject({ kind: 'Cluster', apiVersion: 'kind.x-k8s.io/v1alpha4' });
  });
});

describe("the report's platform fact", () => {
  it('names kind, the cluster, the node image and the Kubernetes version; nothing for local runs', () => {
    expect(
      platformFact({ name: 'kind', detail: { cluster: 't1', nodeImage: 'localhost/attestorm-kind-node:v1.34.4-x', serverVersion: 'v1.34.4', nodes: [{}] } }),
    ).toBe('kind t1: node image localhost/attestorm-kind-node:v1.34.4-x, Kubernetes v1.34.4, 1 node');
    expect(platformFact({ name: 'cluster', detail: { cluster: 'attestorm-local', serverVersion: 'v1.34.4', nodes: [{}, {}] } })).toBe(
      'cluster attestorm-local: Kubernetes v1.34.4, 2 nodes',
    );
    expect(platformFact({ name: 'local' })).toBeNull();
    expect(platformFact(undefined)).toBeNull();
  });
});
