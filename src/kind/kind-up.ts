// `attestorm kind up`: a kind cluster of one or more nodes on a Docker engine that answers (the
// user's, or kind mode's own from `attestorm kind engine up`), from kind's registry node image
// where it can be had and runs, otherwise from the node image built here (said so, with why); the
// project's image built as `cluster up` builds it (buildah, no registry) and loaded with
// `kind load image-archive`.
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PlatformError } from '../errors.js';
import { clusterLayout, ensureNodeBase, NODE_BASE_IMAGE, PROJECT_IMAGE, projectArchive, projectImageKey, sh, splitImage } from '../local-cluster/index.js';
import { kindUp, runTool } from './kind-cli.js';
import { engineEnv } from './dockerd.js';
import { ensureKindBinary } from './kind-binary.js';
import { KIND_VERSIONS, type KindLayout } from './layout.js';
import { engineHasImage, ensureNodeImage } from './node-image.js';

/** kind v0.33.0's default node image (its pkg/apis/config/defaults): Kubernetes 1.37. */
export const KIND_DEFAULT_NODE_IMAGE = 'kindest/node:v1.37.0@sha256:a1ed56cfb0e7b93589bdf97c8cd566405a265939e3620fc4f5de89adff580ae5';

export interface KindClusterOptions {
  name: string;
  nodes: number;
  nodeImage?: string;
  projectImage: boolean;
  log: (s: string) => void;
}

export interface KindCluster {
  name: string;
  context: string;
  nodeImage: string;
  /** Why this node image: given, kind's default from the registry, or the local one (and why). */
  nodeImageReason: string;
  /** DOCKER_HOST of the engine the nodes run on (empty: the engine's default socket). */
  dockerHost: string;
  seconds: number;
}

async function answers(env: NodeJS.ProcessEnv): Promise<boolean> {
  const r = await sh('docker', ['version', '--format', '{{.Server.Version}}'], { env, allowFail: true }).catch(() => null);
  return r !== null && r.code === 0;
}

/** The engine to use: the one the environment names (or the default socket), else kind mode's own. */
export async function engineForKind(l: KindLayout): Promise<NodeJS.ProcessEnv> {
  if (await answers(process.env)) return process.env;
  const own = engineEnv(l);
  if (await answers(own)) return own;
  throw new PlatformError(
    `no Docker engine answers (${process.env.DOCKER_HOST ? `DOCKER_HOST=${process.env.DOCKER_HOST}` : 'the default socket'}, nor ${l.dockerSocket}): start kind mode's own with \`attestorm kind engine up\` (Debian's docker.io), or point DOCKER_HOST at one`,
  );
}

/** A registry image in the engine: already there, or pulled (two minutes at most); else why not. */
async function presentOrPulled(env: NodeJS.ProcessEnv, ref: string): Promise<{ ok: true; how: string } | { ok: false; why: string }> {
  if (await engineHasImage(env, ref)) return { ok: true, how: 'already in the engine' };
  const pull = await sh('timeout', ['120', 'docker', 'pull', '--quiet', ref], { env, allowFail: true });
  if (pull.code === 0) return { ok: true, how: 'pulled from its registry' };
  return { ok: false, why: `${ref.split('@')[0]} cannot be pulled here (${(pull.stderr || pull.stdout || `exit ${pull.code}`).trim().split('\n').pop()})` };
}

/** Which node image, and why: kind's default only where it can run (cgroup v2) and can be had (present or pulled). */
export async function chooseNodeImage(
  l: KindLayout,
  env: NodeJS.ProcessEnv,
  given: string | undefined,
  log: (s: string) => void,
): Promise<{ ref: string; reason: string }> {
  if (given) return { ref: given, reason: 'given with --node-image' };
  let why: string;
  if (!existsSync('/sys/fs/cgroup/cgroup.controllers')) {
    why = `this host is cgroup v1, and kind ${KIND_VERSIONS.kind}'s default ${KIND_DEFAULT_NODE_IMAGE.split('@')[0]} (Kubernetes 1.35+) refuses cgroup v1`;
  } else {
    const had = await presentOrPulled(env, KIND_DEFAULT_NODE_IMAGE);
    if (had.ok) return { ref: KIND_DEFAULT_NODE_IMAGE, reason: `kind's default, ${had.how}` };
    why = had.why;
  }
  const img = await ensureNodeImage(l, env, log);
  const from = { engine: 'already in the engine', cache: `loaded from ${img.archive}`, built: `built now and cached as ${img.archive}` }[img.source];
  return { ref: img.ref, reason: `${why}: using the node image built here without a registry (Kubernetes ${KIND_VERSIONS.kubernetes}; ${from})` };
}

/** The public Node 20 image the Dockerfile starts from by default. */
const PUBLIC_NODE_BASE = 'node:20-bookworm-slim';

/**
 * A Node 20 image in the engine for the Dockerfile's BASE: the public one where it is there or can
 * be pulled, else the base `cluster up` makes without a registry, copied into the engine.
 */
export async function engineNodeBase(env: NodeJS.ProcessEnv, log: (s: string) => void): Promise<{ ref: string; reason: string }> {
  const had = await presentOrPulled(env, PUBLIC_NODE_BASE);
  if (had.ok) return { ref: PUBLIC_NODE_BASE, reason: had.how };
  if (!(await engineHasImage(env, NODE_BASE_IMAGE))) {
    await ensureNodeBase(clusterLayout(), log);
    const host = env.DOCKER_HOST ? ['--dest-daemon-host', env.DOCKER_HOST] : [];
    await sh('skopeo', ['copy', '--quiet', ...host, `containers-storage:${NODE_BASE_IMAGE}`, `docker-daemon:${NODE_BASE_IMAGE}`]);
  }
  return { ref: NODE_BASE_IMAGE, reason: `${had.why}: using the Node base made here without a registry` };
}

/**
 * `ref` as a docker archive `out` (what `kind load image-archive` reads), converted from the OCI
 * archive `oci` once; archives in the same folder matching `stale` (earlier keys) are removed.
 */
export async function dockerArchiveFrom(oci: string, ref: string, out: string, stale: RegExp): Promise<string> {
  if (existsSync(out)) return out;
  const dir = dirname(out);
  mkdirSync(dir, { recursive: true });
  await sh('skopeo', ['copy', '--quiet', `oci-archive:${oci}:${splitImage(ref).tag}`, `docker-archive:${out}.partial:${ref}`]);
  renameSync(`${out}.partial`, out);
  for (const f of readdirSync(dir)) if (stale.test(f) && join(dir, f) !== out) rmSync(join(dir, f), { force: true });
  return out;
}

/** The project's image as a docker archive, from `cluster up`'s OCI archive (earlier sources' archives go). */
async function projectDockerArchive(l: KindLayout, log: (s: string) => void): Promise<string> {
  const out = join(l.partsDir, `attestorm-${projectImageKey()}.docker.tar`);
  if (existsSync(out)) return out;
  return dockerArchiveFrom(await projectArchive(clusterLayout(), log), PROJECT_IMAGE, out, /^attestorm-[0-9a-f]{16}\.docker\.tar$/);
}

export async function kindClusterUp(l: KindLayout, o: KindClusterOptions): Promise<KindCluster> {
  const t0 = Date.now();
  const env = await engineForKind(l);
  const kind = await ensureKindBinary(l, o.log);
  const image = await chooseNodeImage(l, env, o.nodeImage, o.log);
  o.log(`node image ${image.ref}: ${image.reason}`);
  // The project's image first: a build that fails leaves no cluster behind.
  const project = o.projectImage ? await projectDockerArchive(l, o.log) : null;
  await kindUp(o.name, { nodeImage: image.ref, nodes: o.nodes, kind, env, wait: '300s' });
  if (project) {
    const r = await runTool(kind, ['load', 'image-archive', project, '--name', o.name], { hint: '', env });
    if (r.code !== 0) throw new PlatformError(`kind load image-archive ${project} --name ${o.name} failed (exit ${r.code}): ${r.stderr.trim()}`);
    o.log(`loaded ${PROJECT_IMAGE} into every node (kind load image-archive)`);
  }
  return {
    name: o.name,
    context: `kind-${o.name}`,
    nodeImage: image.ref,
    nodeImageReason: image.reason,
    dockerHost: env.DOCKER_HOST ?? '',
    seconds: (Date.now() - t0) / 1000,
  };
}
