// The kind node image, assembled here as `kind build node-image` assembles one (kind's
// pkg/build/nodeimage): a container of the base image gets kubeadm, kubelet and kubectl in
// /usr/bin, /kind/version and the CNI manifest, and the preloaded images imported into its
// containerd; `docker commit` makes the image. Done without kind's builder because that pulls every
// image it did not build (kindnetd among them) from a registry. Cached as a `docker save` archive
// outside the clone, keyed by everything that goes into it.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { clusterLayout, COLD_SECONDS, planLine, sh, type BuildStep, type ClusterLayout } from '../local-cluster/index.js';
import { PlatformError } from '../errors.js';
import { baseKey, baseRootfs, baseRootfsSteps } from './base-image.js';
import { componentImages, componentImageSteps } from './component-images.js';
import { KIND_VERSIONS, type KindLayout } from './layout.js';
import { podNetworkManifest, ROUTES_IMAGE_NAME, routesScript } from './pod-network.js';

export const NODE_IMAGE_NAME = 'localhost/attestorm-kind-node';
/** Bump when a step below changes what the image holds. */
const RECIPE = 1;

/** A hash of the recipe: versions, the base's recipe, the pod network written into the image. */
export function nodeImageKey(): string {
  const h = createHash('sha256');
  h.update(JSON.stringify({ RECIPE, KIND_VERSIONS, base: baseKey() }));
  h.update(routesScript());
  h.update(podNetworkManifest(ROUTES_IMAGE_NAME));
  return h.digest('hex').slice(0, 12);
}

export function nodeImageRef(key = nodeImageKey()): string {
  return `${NODE_IMAGE_NAME}:${KIND_VERSIONS.kubernetes}-${key}`;
}

/** `env` names the engine (DOCKER_HOST). */
function docker(env: NodeJS.ProcessEnv, args: string[]) {
  return sh('docker', args, { env });
}

export async function engineHasImage(env: NodeJS.ProcessEnv, ref: string): Promise<boolean> {
  const r = await sh('docker', ['image', 'inspect', '--format', '{{.Id}}', ref], { env, allowFail: true });
  return r.code === 0;
}

export interface NodeImage {
  ref: string;
  archive: string;
  /** How it got into the engine: already there, loaded from the cache, or built now. */
  source: 'engine' | 'cache' | 'built';
}

/** Script run inside the build container: containerd up, every archive imported, containerd down. */
const IMPORT_SCRIPT = `set -eu
containerd >/var/log/attestorm-preload.log 2>&1 &
for i in $(seq 100); do [ -S /run/containerd/containerd.sock ] && ctr version >/dev/null 2>&1 && break; sleep 0.2; done
for f in /kind/preload/*.tar; do ctr --namespace=k8s.io images import --all-platforms --no-unpack --digests "$f"; done
ctr --namespace=k8s.io images list -q
kill %1; wait || true
rm -rf /kind/preload /var/log/attestorm-preload.log`;

function imagesDir(l: KindLayout, key: string): string {
  return join(l.partsDir, `images-${key}`);
}

/** Every step a build of the node image takes on this cache, the node's assembly last. */
export function nodeImageSteps(l: KindLayout, key = nodeImageKey(), cl: ClusterLayout = clusterLayout()): BuildStep[] {
  return [
    ...baseRootfsSteps(l),
    ...componentImageSteps(l, imagesDir(l, key), key, cl),
    { what: `the node image (its ${KIND_VERSIONS.kubernetes} images packed and imported, the node committed and saved)`, seconds: COLD_SECONDS.nodeImage },
  ];
}

async function build(l: KindLayout, env: NodeJS.ProcessEnv, cl: ClusterLayout, key: string, ref: string, log: (s: string) => void): Promise<void> {
  const t0 = Date.now();
  log(planLine(`the kind node image ${ref}`, nodeImageSteps(l, key, cl))!);
  const rootfs = await baseRootfs(l, log);
  const routesRef = `${ROUTES_IMAGE_NAME}:${key}`;
  const images = await componentImages(l, imagesDir(l, key), rootfs, key, log, cl);
  const base = `localhost/attestorm-kind-base:${key}`;
  if (!(await engineHasImage(env, base))) {
    log(`importing the base rootfs into the engine as ${base}`);
    await sh(
      'sh',
      [
        '-c',
        `tar -C "$1" -c . | docker import --change 'ENV container=docker' --change 'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]' - "$2" >/dev/null`,
        'sh',
        rootfs,
        base,
      ],
      { env },
    );
  }
  const stage = mkdtempSync(join(l.partsDir, 'stage-'));
  const name = `attestorm-kind-build-${process.pid}`;
  try {
    mkdirSync(join(stage, 'kind/manifests'), { recursive: true });
    mkdirSync(join(stage, 'kind/preload'), { recursive: true });
    writeFileSync(join(stage, 'kind/version'), KIND_VERSIONS.kubernetes);
    writeFileSync(join(stage, 'kind/manifests/default-cni.yaml'), podNetworkManifest(routesRef));
    for (const i of images)
      await sh('ln', [i.archive, join(stage, 'kind/preload', `${i.archive.split('/').pop()}`)]).catch(() => sh('cp', [i.archive, join(stage, 'kind/preload')]));
    await docker(env, ['run', '-d', '--name', name, '--entrypoint', 'sleep', '--security-opt', 'seccomp=unconfined', base, 'infinity']);
    for (const c of ['kubeadm', 'kubelet', 'kubectl']) await docker(env, ['cp', join(cl.k8sDir, 'bin', c), `${name}:/usr/bin/${c}`]);
    await docker(env, ['cp', `${join(stage, 'kind')}/.`, `${name}:/kind/`]);
    log(`importing ${images.length} images into the node's containerd`);
    const r = await docker(env, ['exec', name, 'bash', '-c', IMPORT_SCRIPT]);
    const have = r.stdout.split('\n').map((s) => s.trim());
    const missing = images.filter((i) => !have.includes(i.ref));
    if (missing.length)
      throw new PlatformError(`the node image's containerd lacks ${missing.map((i) => i.ref).join(', ')} after the import (has: ${have.join(', ')})`);
    // No STOPSIGNAL (kind's base sets SIGRTMIN+3): Docker 20.10 cannot set it on import or commit;
    // kind removes its nodes with `docker rm -f`, which does not use it.
    await docker(env, ['commit', '--change', 'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]', name, ref]);
  } finally {
    await sh('docker', ['rm', '-f', '-v', name], { env, allowFail: true });
    rmSync(stage, { recursive: true, force: true });
  }
  log(`built ${ref} in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
}

/** Where the local node image of recipe `key` is cached as a `docker save` archive. */
export function nodeImageArchive(l: KindLayout, key = nodeImageKey()): string {
  return join(l.nodeImagesDir, `kind-node-${KIND_VERSIONS.kubernetes}-${key}.tar`);
}

/** The local node image in the engine `env` names: from the engine, else the cache, else built (and cached). */
export async function ensureNodeImage(
  l: KindLayout,
  env: NodeJS.ProcessEnv,
  log: (s: string) => void,
  cl: ClusterLayout = clusterLayout(),
): Promise<NodeImage> {
  const key = nodeImageKey();
  const ref = nodeImageRef(key);
  const archive = nodeImageArchive(l, key);
  if (await engineHasImage(env, ref)) return { ref, archive, source: 'engine' };
  if (existsSync(archive)) {
    log(`loading ${ref} from ${archive}`);
    await docker(env, ['load', '--quiet', '--input', archive]);
    return { ref, archive, source: 'cache' };
  }
  await build(l, env, cl, key, ref, log);
  mkdirSync(l.nodeImagesDir, { recursive: true });
  await docker(env, ['save', '--output', `${archive}.partial`, ref]);
  renameSync(`${archive}.partial`, archive);
  // Older recipes' archives and parts are of no further use.
  for (const f of readdirSync(l.nodeImagesDir)) if (f.endsWith('.tar') && !f.endsWith(`-${key}.tar`)) rmSync(join(l.nodeImagesDir, f), { force: true });
  log(`cached ${ref} as ${archive}`);
  return { ref, archive, source: 'built' };
}
