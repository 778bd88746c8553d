// The images a kind node preloads, made here as docker archives (what kind and `ctr images import`
// read) without a registry: the control plane, etcd and CoreDNS as static binaries FROM scratch,
// pause from the Kubernetes module's pause.c (the local cluster's), kube-proxy and the pod network
// on the node's base rootfs (iptables, conntrack, iproute2). Each is tagged with the name kubeadm
// 1.34 asks for, so the node never pulls; an image's label names what it was built from.
import { cpSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  buildEtcd,
  buildKubernetes,
  clusterLayout,
  COLD_SECONDS,
  etcdSteps,
  goEnv,
  K8S_COMMANDS,
  KIND_K8S_COMMANDS,
  kubernetesSteps,
  pauseArchive,
  sh,
  timedStep,
  toolsGo,
  umociImage,
  type BuildStep,
  type ClusterLayout,
} from '../local-cluster/index.js';
import { KIND_VERSIONS, type KindLayout } from './layout.js';
import { ROUTES_IMAGE_NAME, ROUTES_SCRIPT_PATH, routesScript } from './pod-network.js';

export interface ComponentImage {
  ref: string;
  archive: string;
}

const PATH_ENV = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

function corednsDir(l: KindLayout): string {
  return join(l.cacheDir, `coredns-${KIND_VERSIONS.coredns}`);
}

const corednsStep: BuildStep = { what: `CoreDNS ${KIND_VERSIONS.coredns} from github.com/coredns/coredns`, seconds: COLD_SECONDS.coredns };

/** CoreDNS from its Go module (a wrapper module, as for etcd), cached by version. */
export async function corednsBinary(l: KindLayout, log: (s: string) => void): Promise<string> {
  const dir = corednsDir(l);
  const bin = join(dir, 'bin', 'coredns');
  if (existsSync(bin)) return bin;
  await timedStep(log, corednsStep, async () => {
    const src = join(dir, 'src');
    mkdirSync(src, { recursive: true });
    mkdirSync(join(dir, 'bin'), { recursive: true });
    writeFileSync(join(src, 'go.mod'), `module attestorm.local/coredns-build\n\ngo 1.24\n\nrequire github.com/coredns/coredns ${KIND_VERSIONS.coredns}\n`);
    writeFileSync(join(src, 'tools.go'), toolsGo(['github.com/coredns/coredns']));
    await sh('nice', ['-n', '19', 'go', 'mod', 'tidy'], { cwd: src, env: goEnv() });
    await sh('nice', ['-n', '19', 'go', 'build', '-ldflags', '-s -w', '-o', `${bin}.partial`, 'github.com/coredns/coredns'], { cwd: src, env: goEnv() });
    renameSync(`${bin}.partial`, bin);
  });
  return bin;
}

async function toDockerArchive(from: string, ref: string, out: string): Promise<void> {
  rmSync(out, { force: true });
  await sh('skopeo', ['copy', '--quiet', from, `docker-archive:${out}.partial:${ref}`]);
  renameSync(`${out}.partial`, out);
}

/** A FROM-scratch image of static binaries at the given paths. */
async function scratchImage(work: string, ref: string, files: Record<string, string>, config: string[], out: string): Promise<void> {
  const root = join(work, 'rootfs');
  rmSync(root, { recursive: true, force: true });
  for (const [to, from] of Object.entries(files)) {
    mkdirSync(join(root, to, '..'), { recursive: true });
    cpSync(from, join(root, to));
  }
  await umociImage(join(work, 'oci'), 'image', root, ['--config.env', PATH_ENV, ...config]);
  await toDockerArchive(`oci:${join(work, 'oci')}:image`, ref, out);
  rmSync(join(work, 'oci'), { recursive: true, force: true });
}

/** Images that add files to the node's base rootfs: one shared base layer, one small layer each. */
async function onBase(
  work: string,
  baseRootfs: string,
  images: Array<{ ref: string; files: Record<string, string | { text: string }>; out: string }>,
): Promise<void> {
  const layout = join(work, 'base-oci');
  await umociImage(layout, 'base', baseRootfs, ['--config.env', PATH_ENV]);
  for (const [i, img] of images.entries()) {
    const bundle = join(work, `bundle-${i}`);
    await sh('umoci', ['unpack', '--image', `${layout}:base`, bundle]);
    for (const [to, from] of Object.entries(img.files)) {
      const dest = join(bundle, 'rootfs', to);
      if (typeof from === 'string') cpSync(from, dest);
      else writeFileSync(dest, from.text, { mode: 0o755 });
    }
    await sh('umoci', ['repack', '--image', `${layout}:image-${i}`, bundle]);
    rmSync(bundle, { recursive: true, force: true });
    await toDockerArchive(`oci:${layout}:image-${i}`, img.ref, img.out);
  }
  rmSync(layout, { recursive: true, force: true });
}

/** The Kubernetes commands a kind node needs: the control plane and kubelet, kubeadm, kubectl, kube-proxy. */
const NODE_COMMANDS = [...K8S_COMMANDS, ...KIND_K8S_COMMANDS];

function componentList(dir: string, routesTag: string): ComponentImage[] {
  const k8s = KIND_VERSIONS.kubernetes;
  return [
    ...['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kube-proxy'].map((c) => ({
      ref: `registry.k8s.io/${c}:${k8s}`,
      archive: join(dir, `${c}.tar`),
    })),
    { ref: `registry.k8s.io/etcd:${KIND_VERSIONS.etcdTag}`, archive: join(dir, 'etcd.tar') },
    { ref: `registry.k8s.io/coredns/coredns:${KIND_VERSIONS.corednsTag}`, archive: join(dir, 'coredns.tar') },
    { ref: `registry.k8s.io/pause:${KIND_VERSIONS.pauseTag}`, archive: join(dir, 'pause.tar') },
    { ref: `${ROUTES_IMAGE_NAME}:${routesTag}`, archive: join(dir, 'routes.tar') },
  ];
}

/** What componentImages will build into `dir` on this cache: nothing when every archive is there. */
export function componentImageSteps(l: KindLayout, dir: string, routesTag: string, cl: ClusterLayout = clusterLayout()): BuildStep[] {
  if (componentList(dir, routesTag).every((i) => existsSync(i.archive))) return [];
  return [...etcdSteps(cl), ...kubernetesSteps(cl, NODE_COMMANDS), ...(existsSync(join(corednsDir(l), 'bin', 'coredns')) ? [] : [corednsStep])];
}

/** Every image the node preloads, as docker archives under `dir` (made once); builds the binaries the cache lacks. */
export async function componentImages(
  l: KindLayout,
  dir: string,
  baseRootfs: string,
  routesTag: string,
  log: (s: string) => void,
  cl: ClusterLayout = clusterLayout(),
): Promise<ComponentImage[]> {
  const k8s = KIND_VERSIONS.kubernetes;
  const kbin = (c: string) => join(cl.k8sDir, 'bin', c);
  const etcd = join(cl.etcdDir, 'bin', 'etcd');
  const list = componentList(dir, routesTag);
  if (list.every((i) => existsSync(i.archive))) return list;
  await buildEtcd(cl, log);
  await buildKubernetes(cl, NODE_COMMANDS, log);
  const coredns = await corednsBinary(l, log);
  const pause = await pauseArchive(cl, log);
  mkdirSync(dir, { recursive: true });
  const work = mkdtempSync(join(dir, 'work-'));
  try {
    const at = (name: string) => list.find((i) => i.ref.includes(`/${name}:`))!;
    for (const c of ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler'])
      await scratchImage(work, at(c).ref, { [`usr/local/bin/${c}`]: kbin(c) }, ['--config.label', `org.opencontainers.image.version=${k8s}`], at(c).archive);
    // kubeadm 1.34 names etcd 3.6.5-0; the binary is the local cluster's etcd, recorded in the label.
    await scratchImage(
      work,
      at('etcd').ref,
      { 'usr/local/bin/etcd': etcd },
      ['--config.label', `org.opencontainers.image.version=${KIND_VERSIONS.etcd}`],
      at('etcd').archive,
    );
    await scratchImage(
      work,
      at('coredns').ref,
      { coredns },
      ['--config.entrypoint', '/coredns', '--config.label', `org.opencontainers.image.version=${KIND_VERSIONS.coredns}`],
      at('coredns').archive,
    );
    await toDockerArchive(`oci-archive:${pause}:${KIND_VERSIONS.pauseTag}`, at('pause').ref, at('pause').archive);
    await onBase(work, baseRootfs, [
      { ref: at('kube-proxy').ref, files: { 'usr/local/bin/kube-proxy': kbin('kube-proxy') }, out: at('kube-proxy').archive },
      {
        ref: list.at(-1)!.ref,
        files: { 'usr/local/bin/kubectl': kbin('kubectl'), [ROUTES_SCRIPT_PATH.slice(1)]: { text: routesScript() } },
        out: list.at(-1)!.archive,
      },
    ]);
    log(`made ${list.length} images for the node (${dir})`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return list;
}
