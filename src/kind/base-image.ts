// The base of the node image, as kind's images/base describes it, made from Debian's packages:
// a debootstrap rootfs with systemd, containerd, runc, the CNI plugins and the tools kind's
// entrypoint and kubeadm call, plus kind's own base-image files (entrypoint, /kind scripts,
// systemd units, containerd and crictl configs) taken from the kind module the binary was built
// from. Changed for this project: containerd's runc sits behind the capability filter, the OOM score
// is not written (no CAP_SYS_RESOURCE), the sandbox image is the one kubeadm 1.34 names.
import { createHash } from 'node:crypto';
import { appendFileSync, chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PlatformError } from '../errors.js';
import { COLD_SECONDS, goEnv, sh, timedStep, type BuildStep } from '../local-cluster/index.js';
import { KIND_VERSIONS, type KindLayout } from './layout.js';
import { runcCapsScript } from './runc-caps.js';

/** What kind's base installs, less the rootless, NFS and iSCSI parts; containerd, runc and CNI from Debian. */
export const BASE_PACKAGES = [
  'systemd',
  'containerd',
  'runc',
  'containernetworking-plugins',
  'conntrack',
  'iptables',
  'nftables',
  'iproute2',
  'ethtool',
  'util-linux',
  'mount',
  'kmod',
  'libseccomp2',
  'pigz',
  'bash',
  'ca-certificates',
  'curl',
  'jq',
  'procps',
] as const;

/** kind's CNI binaries, from Debian's containernetworking-plugins (/usr/lib/cni). */
const CNI_PLUGINS = ['host-local', 'loopback', 'ptp', 'portmap', 'bridge'];
export const RUNC_WRAPPER = '/usr/local/sbin/runc-caps';
export const SANDBOX_IMAGE = `registry.k8s.io/pause:${KIND_VERSIONS.pauseTag}`;

/** kind's module directory in Go's module cache (downloaded when missing). */
export async function kindModuleDir(): Promise<string> {
  const r = await sh('go', ['mod', 'download', '-json', `sigs.k8s.io/kind@${KIND_VERSIONS.kind}`], { env: goEnv() });
  const dir = (JSON.parse(r.stdout) as { Dir?: string }).Dir;
  if (!dir || !existsSync(join(dir, 'images/base/files')))
    throw new PlatformError(`sigs.k8s.io/kind@${KIND_VERSIONS.kind} has no images/base/files in Go's module cache`);
  return dir;
}

/** kind's containerd config, changed where this host and Debian's containerd 1.6 need it; every change must apply. */
export function containerdConfig(kindConfig: string): string {
  const edits: Array<[RegExp, string, string]> = [
    // Rootless only; its socket never exists here.
    [/\[proxy_plugins\][\s\S]*?address = "[^"]*"\n/, '', 'the fuse-overlayfs proxy plugin'],
    [/restrict_oom_score_adj = false/, 'restrict_oom_score_adj = true', 'restrict_oom_score_adj'],
    [/sandbox_image = "[^"]*"/, `sandbox_image = "${SANDBOX_IMAGE}"`, 'sandbox_image'],
    [/(\[plugins\."io\.containerd\.grpc\.v1\.cri"\.containerd\.runtimes\.runc\.options\]\n)/, `$1    BinaryName = "${RUNC_WRAPPER}"\n`, 'the runc options'],
  ];
  let out = kindConfig;
  for (const [re, to, what] of edits) {
    if (!re.test(out)) throw new PlatformError(`kind ${KIND_VERSIONS.kind}'s containerd config changed: ${what} not found`);
    out = out.replace(re, to);
  }
  return out;
}

/** `ctr oci spec` with kind's createContainer hook (product_uuid) and without rlimits, as kind's base makes it. */
export function criBaseSpec(ctrOciSpec: string): string {
  const spec = JSON.parse(ctrOciSpec) as { hooks?: { createContainer?: Array<{ path: string }> }; process?: { rlimits?: unknown } };
  spec.hooks ??= {};
  spec.hooks.createContainer = [...(spec.hooks.createContainer ?? []), { path: '/kind/bin/mount-product-files.sh' }];
  delete spec.process?.rlimits;
  return `${JSON.stringify(spec, null, 2)}\n`;
}

function copyTree(from: string, to: string, mode: number): void {
  mkdirSync(to, { recursive: true, mode: 0o755 });
  for (const e of readdirSync(from, { withFileTypes: true })) {
    if (e.isDirectory()) copyTree(join(from, e.name), join(to, e.name), mode);
    else {
      cpSync(join(from, e.name), join(to, e.name));
      chmodSync(join(to, e.name), mode);
    }
  }
}

function removeIn(dir: string, match: (name: string) => boolean): void {
  if (!existsSync(dir)) return;
  for (const f of readdirSync(dir)) if (match(f)) rmSync(join(dir, f), { recursive: true, force: true });
}

/** Lays kind's base-image files over the rootfs and trims systemd as kind's base Dockerfile does. */
async function configure(root: string, kindDir: string): Promise<void> {
  const files = join(kindDir, 'images/base/files');
  copyTree(join(files, 'usr/local/bin'), join(root, 'usr/local/bin'), 0o755);
  copyTree(join(files, 'kind'), join(root, 'kind'), 0o644);
  copyTree(join(files, 'kind/bin'), join(root, 'kind/bin'), 0o755);
  copyTree(join(files, 'etc'), join(root, 'etc'), 0o644);
  const lib = join(root, 'lib/systemd/system');
  rmSync(join(lib, 'sysinit.target.wants/systemd-tmpfiles-setup.service'), { force: true });
  removeIn(join(lib, 'multi-user.target.wants'), () => true);
  removeIn(join(lib, 'local-fs.target.wants'), () => true);
  removeIn(join(lib, 'basic.target.wants'), () => true);
  removeIn(join(lib, 'sockets.target.wants'), (f) => f.includes('udev') || f.includes('initctl'));
  for (const d of readdirSync(join(root, 'etc/systemd/system')).filter((d) => d.endsWith('.wants'))) removeIn(join(root, 'etc/systemd/system', d), () => true);
  appendFileSync(join(root, 'etc/systemd/journald.conf'), 'ReadKMsg=no\n');
  rmSync(join(root, 'sbin/init'), { force: true });
  symlinkSync('/lib/systemd/systemd', join(root, 'sbin/init'));
  await sh('chroot', [root, 'systemctl', 'enable', 'kubelet.service', 'containerd.service', 'undo-mount-hacks.service']);
  await sh('chroot', [root, 'systemctl', 'mask', 'systemd-binfmt.service']);
  mkdirSync(join(root, 'etc/kubernetes/manifests'), { recursive: true });
  // kind's units and scripts name /usr/local/bin/containerd and /opt/cni/bin; Debian installs elsewhere.
  for (const t of ['containerd', 'ctr']) symlinkSync(`/usr/bin/${t}`, join(root, 'usr/local/bin', t));
  mkdirSync(join(root, 'opt/cni/bin'), { recursive: true });
  for (const p of CNI_PLUGINS) symlinkSync(`/usr/lib/cni/${p}`, join(root, 'opt/cni/bin', p));
  writeFileSync(join(root, RUNC_WRAPPER.slice(1)), runcCapsScript('/usr/sbin/runc'), { mode: 0o755 });
  const toml = join(root, 'etc/containerd/config.toml');
  writeFileSync(toml, containerdConfig(readFileSync(toml, 'utf8')));
  const spec = await sh('chroot', [root, 'ctr', 'oci', 'spec']);
  writeFileSync(join(root, 'etc/containerd/cri-base.json'), criBaseSpec(spec.stdout));
  removeIn(join(root, 'var/cache/apt/archives'), (f) => f.endsWith('.deb'));
  removeIn(join(root, 'var/lib/apt/lists'), (f) => f !== 'lock' && f !== 'partial');
}

/** Bump when `configure` changes what the base holds. */
const BASE_RECIPE = 1;

export function baseKey(): string {
  const h = createHash('sha256');
  h.update(JSON.stringify({ BASE_RECIPE, kind: KIND_VERSIONS.kind, suite: KIND_VERSIONS.debianSuite, BASE_PACKAGES, SANDBOX_IMAGE, RUNC_WRAPPER }));
  h.update(runcCapsScript('/usr/sbin/runc'));
  return h.digest('hex').slice(0, 12);
}

function baseDir(l: KindLayout): string {
  return join(l.partsDir, `base-${baseKey()}.rootfs`);
}

/** The base rootfs's build step when the cache lacks it, else none. */
export function baseRootfsSteps(l: KindLayout): BuildStep[] {
  if (existsSync(baseDir(l))) return [];
  return [
    {
      what: `the node's base rootfs (debootstrap ${KIND_VERSIONS.debianSuite} with ${BASE_PACKAGES.length} packages, Debian's mirror)`,
      seconds: COLD_SECONDS.kindBase,
    },
  ];
}

/** The base rootfs in the cache (made once per recipe), ready to import. */
export async function baseRootfs(l: KindLayout, log: (s: string) => void): Promise<string> {
  const dir = baseDir(l);
  const [step] = baseRootfsSteps(l);
  if (!step) return dir;
  mkdirSync(l.partsDir, { recursive: true });
  const partial = `${dir}.partial`;
  rmSync(partial, { recursive: true, force: true });
  const kindDir = await kindModuleDir();
  await timedStep(log, step, async () => {
    await sh('nice', [
      '-n',
      '10',
      'debootstrap',
      '--variant=minbase',
      `--include=${BASE_PACKAGES.join(',')}`,
      KIND_VERSIONS.debianSuite,
      partial,
      'http://deb.debian.org/debian',
    ]);
    await configure(partial, kindDir);
    renameSync(partial, dir);
  });
  return dir;
}
