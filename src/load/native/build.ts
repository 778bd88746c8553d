// Builds the native load worker (every C file in this folder; worker.h says which part is where)
// with the system C compiler on first use and caches the binary under node_modules/.cache/attestorm,
// keyed by a hash of the sources, the flags and the compiler's version, so a changed source or compiler builds anew and
// `npm ci && npm start` needs nothing but cc. A binary built ahead of time for these very sources
// (dist/native: the project's image compiles it at build time and has no compiler) is taken first.
// Without either it says why, and the generator falls back to the Node h2 worker.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { accessSync, constants, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { PlatformError } from '../../errors.js';
import { PREBUILT_DIR, PROJECT_ROOT } from '../../util/index.js';

export const NATIVE_SOURCE_DIR = join(PROJECT_ROOT, 'src', 'load', 'native');
export const NATIVE_CACHE_DIR = join(PROJECT_ROOT, 'node_modules', '.cache', 'attestorm');
// The binary's name starts like the worker bundles' (load-worker-worker-main-…), so whatever looks
// for the generator's processes by name finds native workers too.
export const NATIVE_BINARY_PREFIX = 'load-worker-worker-main-native-';
/** Where a binary built ahead of time lives, with a `.json` beside it saying how it was built. */
export const NATIVE_PREBUILT_DIR = join(PROJECT_ROOT, PREBUILT_DIR, 'native');
// What the key of a build ahead of time hashes in place of the compiler: the run that looks for it
// may have none, so the sources and flags alone name it (the compiler is recorded beside it).
const AHEAD_OF_TIME = 'ahead-of-time';

/** The flags of every real build (tests build variants on top of them). */
export const NATIVE_BASE_FLAGS: readonly string[] = ['-O2', '-std=gnu11', '-Wall', '-fno-plt'];
// Static first: no dynamic loader at exec (each of thousands of workers starts faster) and no
// shared-library relocations to copy; where no static libc is installed, dynamic linking.
const LINKS: string[][] = [['-static'], []];

export type NativeBuild =
  { ok: true; binary: string; key: string; linkage: 'static' | 'dynamic'; compiler: string; cached: boolean } | { ok: false; reason: string };

export interface NativeBuildOptions {
  /** The environment the compiler is looked up in (PATH, CC); default process.env. */
  env?: NodeJS.ProcessEnv;
  cacheDir?: string;
  sourceDir?: string;
  /** Where a binary built ahead of time is looked for first; default NATIVE_PREBUILT_DIR. */
  prebuiltDir?: string;
}

/** Resolves a command name through PATH, as a shell would; null when not found or not executable. */
export function findExecutable(name: string, env: NodeJS.ProcessEnv): string | null {
  const candidates =
    isAbsolute(name) || name.includes('/')
      ? [name]
      : (env.PATH ?? '')
          .split(delimiter)
          .filter(Boolean)
          .map((d) => join(d, name));
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      // not here
    }
  }
  return null;
}

function run(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { env, encoding: 'utf8', timeout: 120_000, maxBuffer: 4 << 20 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolve({ code, stdout, stderr: stderr || (err && !stdout ? err.message : '') });
    });
  });
}

/** The C sources and headers of the native worker, sorted (what the cache key hashes). */
export function nativeSources(sourceDir = NATIVE_SOURCE_DIR): string[] {
  return readdirSync(sourceDir)
    .filter((f) => /\.[ch]$/.test(f))
    .sort()
    .map((f) => join(sourceDir, f));
}

/** The cache key: sources, flags and the compiler's identity. */
export function nativeBuildKey(sources: readonly string[], compilerVersion: string): string {
  const h = createHash('sha256').update(compilerVersion).update('\0').update(NATIVE_BASE_FLAGS.join(' ')).update('\0').update(JSON.stringify(LINKS));
  for (const s of sources) h.update(s.split('/').pop()!).update('\0').update(readFileSync(s)).update('\0');
  return h.digest('hex').slice(0, 12);
}

const memo = new Map<string, Promise<NativeBuild>>();

/** The native worker binary, built now or taken from the cache; never throws. */
export function buildNativeWorker(opts: NativeBuildOptions = {}): Promise<NativeBuild> {
  const env = opts.env ?? process.env;
  const id = JSON.stringify([env.PATH, env.CC, opts.cacheDir, opts.sourceDir, opts.prebuiltDir]);
  let p = memo.get(id);
  if (!p) {
    const sourceDir = opts.sourceDir ?? NATIVE_SOURCE_DIR;
    const ahead = prebuiltWorker(opts.prebuiltDir ?? NATIVE_PREBUILT_DIR, sourceDir);
    p = ahead ? Promise.resolve(ahead) : build(env, opts.cacheDir ?? NATIVE_CACHE_DIR, sourceDir);
    memo.set(id, p);
    // A failure is not remembered: installing a compiler mid-session takes effect on the next run.
    void p.then((b) => void (b.ok || memo.delete(id)));
  }
  return p;
}

async function build(env: NodeJS.ProcessEnv, cacheDir: string, sourceDir: string): Promise<NativeBuild> {
  const ccName = env.CC?.trim() || 'cc';
  const cc = findExecutable(ccName, env);
  if (!cc) return { ok: false, reason: `no C compiler: "${ccName}" is not an executable in PATH (${env.PATH ?? 'unset'}); install gcc or clang, or set CC` };
  const version = await run(cc, ['--version'], env);
  if (version.code !== 0) return { ok: false, reason: `the C compiler ${cc} does not run (${version.stderr.trim().split('\n')[0] || `exit ${version.code}`})` };
  const compiler = `${cc}: ${version.stdout.split('\n')[0]!.trim()}`;
  let sources: string[];
  try {
    sources = nativeSources(sourceDir);
  } catch (err) {
    return { ok: false, reason: `the native worker's sources are missing (${(err as Error).message})` };
  }
  const key = nativeBuildKey(sources, compiler);
  const binary = join(cacheDir, `${NATIVE_BINARY_PREFIX}${key}`);
  for (const linkage of ['static', 'dynamic'] as const) {
    if (existsSync(`${binary}.${linkage}`) && existsSync(binary)) return { ok: true, binary, key, linkage, compiler, cached: true };
  }
  mkdirSync(cacheDir, { recursive: true });
  const cSources = sources.filter((s) => s.endsWith('.c'));
  const errors: string[] = [];
  for (const [i, link] of LINKS.entries()) {
    const linkage = i === 0 ? 'static' : 'dynamic';
    // Built under a name of its own and renamed into place: concurrent first runs never exec a half-written file.
    const tmp = `${binary}.tmp-${process.pid}-${i}`;
    const res = await run(cc, [...NATIVE_BASE_FLAGS, ...link, '-o', tmp, ...cSources, '-lm'], env);
    if (res.code === 0) {
      renameSync(tmp, binary);
      // The marker says how it was linked (and that the rename finished).
      writeFileSync(`${binary}.${linkage}`, '');
      return { ok: true, binary, key, linkage, compiler, cached: false };
    }
    rmSync(tmp, { force: true });
    errors.push(`${linkage}: ${res.stderr.trim().split('\n').slice(0, 3).join(' / ') || `exit ${res.code}`}`);
  }
  return { ok: false, reason: `the native worker did not compile with ${compiler} (${errors.join('; ')})` };
}

interface PrebuiltRecord {
  linkage: 'static' | 'dynamic';
  compiler: string;
}

/** The binary built ahead of time for exactly these sources and flags, or null. */
function prebuiltWorker(dir: string, sourceDir: string): NativeBuild | null {
  let binary: string;
  let key: string;
  let record: PrebuiltRecord;
  try {
    key = nativeBuildKey(nativeSources(sourceDir), AHEAD_OF_TIME);
    binary = join(dir, `${NATIVE_BINARY_PREFIX}${key}`);
    record = JSON.parse(readFileSync(`${binary}.json`, 'utf8')) as PrebuiltRecord;
    accessSync(binary, constants.X_OK);
  } catch {
    return null;
  }
  return { ok: true, binary, key, linkage: record.linkage, compiler: record.compiler, cached: true };
}

/**
 * Compiles the worker now, linked statically, into `outDir` under the name a run without a compiler
 * looks for (the project's image runs this at build time). Throws when it cannot: an image that
 * should carry the worker must not be built without it.
 */
export async function prebuildNativeWorker(outDir = NATIVE_PREBUILT_DIR, opts: Omit<NativeBuildOptions, 'cacheDir' | 'prebuiltDir'> = {}): Promise<string> {
  const sourceDir = opts.sourceDir ?? NATIVE_SOURCE_DIR;
  const work = join(outDir, `.build-${process.pid}`);
  try {
    // Never an earlier prebuilt binary: this is the build that makes one.
    const built = await build(opts.env ?? process.env, work, sourceDir);
    if (!built.ok) throw new PlatformError(`cannot build the native worker ahead of time: ${built.reason}`);
    if (built.linkage !== 'static')
      throw new PlatformError(`the native worker linked only dynamically with ${built.compiler}: install the C library's static archive (Debian: libc6-dev)`);
    const key = nativeBuildKey(nativeSources(sourceDir), AHEAD_OF_TIME);
    const binary = join(outDir, `${NATIVE_BINARY_PREFIX}${key}`);
    renameSync(built.binary, binary);
    writeFileSync(`${binary}.json`, `${JSON.stringify({ linkage: built.linkage, compiler: built.compiler } satisfies PrebuiltRecord)}\n`);
    return binary;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
