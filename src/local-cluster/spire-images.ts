// SPIRE images made from the user's own binaries (the public ghcr.io images cannot be pulled
// without a registry): spire-server and spire-agent copied onto the local Node base (Debian, so
// the cgo-built binaries find glibc) by buildah, cached as OCI archives keyed by a hash of both
// binaries, and imported into the local cluster's containerd. Nothing of SPIRE is kept elsewhere.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { accessSync, constants, createReadStream, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PlatformError } from '../errors.js';
import { clusterAgentOf } from '../kube/index.js';
import { ensureNodeBase, importImage, NODE_BASE_IMAGE, splitImage } from './images.js';
import type { ClusterLayout } from './layout.js';
import { sh } from './sh.js';

export const SPIRE_BINARIES = ['spire-server', 'spire-agent'] as const;
type SpireBinary = (typeof SPIRE_BINARIES)[number];
/** Where the binaries sit in the image: where the public images have them (`entry create` is exec'd there). */
const IMAGE_BIN_DIR = '/opt/spire/bin';
/** The public images' users: the server as uid 1000 (fsGroup 1000 on its data), the agent as root. */
const IMAGE_USER: Record<SpireBinary, string> = { 'spire-server': '1000:1000', 'spire-agent': '0:0' };

export interface SpireImagePair {
  serverImage: string;
  agentImage: string;
}

export interface SpireBuild {
  dir: string;
  /** What `spire-agent --version` prints (e.g. 1.16.0-dev-unk). */
  version: string;
  /** First 12 hex digits of the SHA-256 of both binaries: a rebuild happens only when they change. */
  key: string;
}

/**
 * Problems with a SPIRE binary folder, each naming the file and what is wrong (empty: usable).
 * `what` names where the folder came from (agent.binDir, SPIRE_BIN_DIR).
 */
export function spireBinDirProblems(dir: string, what: string): string[] {
  if (!existsSync(dir)) return [`${what} ${dir} does not exist: point it at the folder holding your spire-server and spire-agent builds`];
  const out: string[] = [];
  for (const b of SPIRE_BINARIES) {
    const f = join(dir, b);
    try {
      if (!statSync(f).isFile()) throw new Error('not a file');
      accessSync(f, constants.X_OK);
    } catch {
      out.push(`${what} ${dir} has no executable ${b}`);
    }
  }
  return out;
}

/** `1.16.0-dev-unk` → a valid image tag part (letters, digits, `.`, `_`, `-`). */
export function tagPart(version: string): string {
  return (
    version
      .trim()
      .replace(/^v/, '')
      .replace(/[^A-Za-z0-9_.-]/g, '_')
      .slice(0, 100) || 'unknown'
  );
}

export function spireImageRefs(b: Pick<SpireBuild, 'version' | 'key'>): SpireImagePair {
  const tag = `${tagPart(b.version)}-${b.key}`;
  return { serverImage: `docker.io/library/attestorm-spire-server:${tag}`, agentImage: `docker.io/library/attestorm-spire-agent:${tag}` };
}

async function hashFiles(files: string[]): Promise<string> {
  const h = createHash('sha256');
  for (const f of files) {
    h.update(`\0${f.split('/').pop()}\0`);
    for await (const chunk of createReadStream(f)) h.update(chunk as Buffer);
  }
  return h.digest('hex').slice(0, 12);
}

/** The build in `dir`: its version (from the agent itself) and the key of both binaries. */
export async function spireBuild(dir: string): Promise<SpireBuild> {
  const abs = resolve(dir);
  const problems = spireBinDirProblems(abs, 'SPIRE binary folder');
  if (problems.length) throw new PlatformError(problems.join('; '));
  // spire-agent prints its version on stderr.
  const r = spawnSync(join(abs, 'spire-agent'), ['--version'], { encoding: 'utf8', timeout: 10_000 });
  const version = `${r.stdout ?? ''}\n${r.stderr ?? ''}`
    .split('\n')
    .map((x) => x.trim())
    .find((x) => /^v?\d+\.\d+/.test(x));
  if (!version)
    throw new PlatformError(
      `${join(abs, 'spire-agent')} --version printed no version (exit ${r.status}${r.error ? `, ${r.error.message}` : ''}): ${`${r.stdout}${r.stderr}`.trim().slice(0, 200)}`,
    );
  return { dir: abs, version, key: await hashFiles(SPIRE_BINARIES.map((b) => join(abs, b))) };
}

function archiveOf(l: ClusterLayout, b: SpireBuild, binary: SpireBinary): string {
  return join(l.imagesDir, `${binary}-${b.key}.tar`);
}

/** One image (`binary` on the Node base) as an OCI archive in the cache; built only when missing. */
export async function spireArchive(l: ClusterLayout, b: SpireBuild, binary: SpireBinary, ref: string, log: (s: string) => void): Promise<string> {
  const archive = archiveOf(l, b, binary);
  if (existsSync(archive)) return archive;
  mkdirSync(l.imagesDir, { recursive: true });
  await ensureNodeBase(l, log);
  const { tag } = splitImage(ref);
  const local = `localhost/${splitImage(ref).base.split('/').pop()}:${tag}`;
  const t0 = Date.now();
  const ctr = (await sh('buildah', ['from', '--pull=never', '--name', `attestorm-${binary}-${b.key}-${process.pid}`, NODE_BASE_IMAGE])).stdout.trim();
  try {
    await sh('buildah', ['copy', '--chmod', '0755', ctr, join(b.dir, binary), `${IMAGE_BIN_DIR}/${binary}`]);
    await sh('buildah', [
      'config',
      '--entrypoint',
      JSON.stringify([`${IMAGE_BIN_DIR}/${binary}`, 'run']),
      '--cmd',
      '',
      '--user',
      IMAGE_USER[binary],
      '--workingdir',
      '/',
      '--label',
      `dev.attestorm.spire.version=${b.version}`,
      '--label',
      `dev.attestorm.spire.key=${b.key}`,
      ctr,
    ]);
    await sh('buildah', ['commit', '--quiet', ctr, local]);
  } finally {
    await sh('buildah', ['rm', ctr], { allowFail: true });
  }
  // Archives of earlier builds of the same binary go: they are keyed by content and never reused.
  for (const old of readdirSync(l.imagesDir).filter((f) => new RegExp(`^${binary}-[0-9a-f]{12}\\.tar$`).test(f)))
    rmSync(join(l.imagesDir, old), { force: true });
  await sh('skopeo', ['copy', '--quiet', `containers-storage:${local}`, `oci-archive:${archive}.partial:${tag}`]);
  renameSync(`${archive}.partial`, archive);
  await sh('buildah', ['rmi', local], { allowFail: true });
  log(`made ${ref} from ${join(b.dir, binary)} (${b.version}) in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  return archive;
}

/** Whether the node's containerd already has `ref` (the tag carries the key: same name, same binaries). */
async function containerdHas(l: ClusterLayout, ref: string): Promise<boolean> {
  const ls = await sh('ctr', ['--address', l.containerdSocket, '-n', 'k8s.io', 'images', 'ls', '--quiet'], { allowFail: true });
  return ls.code === 0 && ls.stdout.split('\n').some((line) => line.trim() === ref);
}

/**
 * The SPIRE images of the build in `dir`, made when the cache lacks them and imported into the
 * local cluster's containerd when it lacks them. Returns the image names the manifests use.
 */
export async function ensureSpireImages(l: ClusterLayout, dir: string, log: (s: string) => void): Promise<SpireImagePair & { build: SpireBuild }> {
  const b = await spireBuild(dir);
  const refs = spireImageRefs(b);
  for (const [binary, ref] of [
    ['spire-server', refs.serverImage],
    ['spire-agent', refs.agentImage],
  ] as const) {
    if (await containerdHas(l, ref)) continue;
    const archive = await spireArchive(l, b, binary, ref, log);
    await importImage(l, archive, ref);
    log(`imported ${ref}`);
  }
  return { ...refs, build: b };
}

/** Which SPIRE build each spire variant runs in a cluster, or why it cannot run there. */
export interface SpireImagePlan {
  /** Variant name → the folder of its binaries (the local cluster). */
  binDirs: Map<string, string>;
  problems: string[];
}

/** The first folder on PATH holding both binaries, as local SPIRE variants find them. */
function spireOnPath(path = process.env.PATH ?? ''): string | undefined {
  return path
    .split(':')
    .filter(Boolean)
    .find((d) => SPIRE_BINARIES.every((b) => existsSync(join(d, b))));
}

type SpireVariantLike = { name: string; agent: { kind: string; binDir?: string | undefined } };

/** Where a cluster run's SPIRE images come from: the local cluster and kind can take images made here, other clusters pull. */
export type SpireImageSite = 'local-cluster' | 'kind' | 'elsewhere';

/**
 * Before anything starts. On the local cluster (which cannot pull) a spire variant needs the user's
 * binaries (agent.binDir, else SPIRE_BIN_DIR, else PATH). On kind the user's binaries are used where
 * named (agent.binDir or SPIRE_BIN_DIR), loaded into the nodes; otherwise the nodes pull the public
 * images. Elsewhere the cluster pulls the public images, and an explicit agent.binDir is refused
 * rather than ignored.
 */
export function planSpireImages(variants: SpireVariantLike[], opts: { site: SpireImageSite; context: string; env?: NodeJS.ProcessEnv }): SpireImagePlan {
  const env = opts.env ?? process.env;
  const plan: SpireImagePlan = { binDirs: new Map(), problems: [] };
  for (const v of variants) {
    if (!clusterAgentOf(v.agent.kind)?.spireImages) continue;
    const explicit = v.agent.binDir;
    if (opts.site === 'elsewhere') {
      if (explicit)
        plan.problems.push(
          `variants.${v.name}.agent.binDir: images are made from SPIRE binaries for the local cluster (attestorm cluster up) and kind only; ${opts.context} pulls the public ghcr.io images: remove binDir, or run on the local cluster or kind`,
        );
      continue;
    }
    const dir = explicit ?? (env.SPIRE_BIN_DIR || undefined) ?? (opts.site === 'local-cluster' ? spireOnPath(env.PATH) : undefined);
    if (!dir) {
      if (opts.site === 'kind') continue; // kind's nodes pull the public images
      plan.problems.push(
        `variants.${v.name}: a SPIRE variant on the local cluster (${opts.context}) runs images made from your SPIRE build, and none was found: set SPIRE_BIN_DIR (or agent.binDir) to the folder with spire-server and spire-agent (this cluster cannot pull the public ghcr.io images)`,
      );
      continue;
    }
    const problems = spireBinDirProblems(dir, `variants.${v.name}: ${explicit ? 'agent.binDir' : env.SPIRE_BIN_DIR ? 'SPIRE_BIN_DIR' : 'the folder on PATH'}`);
    if (problems.length) plan.problems.push(...problems);
    else plan.binDirs.set(v.name, resolve(dir));
  }
  return plan;
}

/**
 * Makes the images of every planned build once per folder and hands them to the cluster (`place`:
 * the local cluster's containerd by default, kind's nodes with its loader); variant name → its images.
 */
export async function makePlannedSpireImages(
  l: ClusterLayout,
  plan: SpireImagePlan,
  log: (s: string) => void,
  place: (dir: string) => Promise<SpireImagePair> = (dir) => ensureSpireImages(l, dir, log),
): Promise<Map<string, SpireImagePair>> {
  const byDir = new Map<string, SpireImagePair>();
  const out = new Map<string, SpireImagePair>();
  for (const [variant, dir] of plan.binDirs) {
    let pair = byDir.get(dir);
    if (!pair) {
      const made = await place(dir);
      pair = { serverImage: made.serverImage, agentImage: made.agentImage };
      byDir.set(dir, pair);
    }
    out.set(variant, pair);
  }
  return out;
}
