// Child-process entry points are bundled once into plain JavaScript so that agents and workers
// start without the TypeScript loader: no loader memory, no esbuild service charged to a cgroup.
// An installed package ships no TypeScript: there the bundles `npm pack` built into dist/ are used.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleOnce, CLI_EXTERNAL, NATIVE_EXTERNAL, newestSourceMtime } from './esbuild-bundle.mjs';

/** A child-process entry and how it is bundled; each subsystem declares its own. */
export interface BundleSpec {
  /** Relative to the project root, e.g. src/load/worker/pod-main.ts. */
  entry: string;
  minify?: boolean;
  format?: 'esm' | 'cjs';
}

/** Where bundles of an installed package live: dist/ under the package, written by npm pack (prepack). */
export const PREBUILT_DIR = 'dist';

/**
 * The project root (where attestorm's package.json lives). From the sources it is ../../; from a
 * bundle in node_modules/.cache/attestorm (the CLI and child processes run bundled) it is further
 * up, so walk up until it is found.
 */
export const PROJECT_ROOT = findProjectRoot();

function findProjectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 8; i++) {
    try {
      if ((JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string }).name === 'attestorm') return `${dir}/`;
    } catch {
      // No package.json here.
    }
    dir = dirname(dir);
  }
  return fileURLToPath(new URL('../../', import.meta.url));
}

/**
 * Bundles a TypeScript entry (absolute path or relative to the project root) into
 * node_modules/.cache/attestorm/<name>-<hash>.mjs (.cjs with format 'cjs') and returns that path.
 * The hash covers the entry path and the newest source mtime, so edits rebuild and repeated runs
 * reuse the file. 'cjs' is for entries started hundreds of times (load workers): node starts a
 * CommonJS file without initialising its ESM loader, measured 10–20 ms less CPU per process here.
 */
export async function bundleEntry(entry: string, opts: { minify?: boolean; format?: 'esm' | 'cjs' } = {}): Promise<string> {
  const cjs = opts.format === 'cjs';
  const abs = entry.startsWith('/') ? entry : join(PROJECT_ROOT, entry);
  if (!existsSync(abs)) return prebuiltBundle(abs, opts);
  const srcStamp = newestSourceMtime(join(PROJECT_ROOT, 'src'));
  const hash = createHash('sha256')
    .update(abs)
    .update(String(srcStamp))
    .update(readFileSync(abs))
    .update(opts.minify ? 'min' : '')
    .update(cjs ? 'cjs' : '')
    .digest('hex')
    .slice(0, 12);
  const name = bundleName(abs);
  const outDir = join(PROJECT_ROOT, 'node_modules', '.cache', 'attestorm');
  const out = join(outDir, `${name}-${hash}.${cjs ? 'cjs' : 'mjs'}`);
  return bundleOnce({ entry: abs, out, prefix: `${name}-`, external: NATIVE_EXTERNAL, minify: opts.minify ?? false, format: cjs ? 'cjs' : 'esm' });
}

export function bundleSpec(spec: BundleSpec): Promise<string> {
  return bundleEntry(spec.entry, spec);
}

/** src/load/worker/pod-main.ts → load-worker-pod-main. */
function bundleName(abs: string): string {
  return relative(join(PROJECT_ROOT, 'src'), abs).replace(/[/\\]/g, '-').replace(/\.ts$/, '');
}

/** The file name of a spec's bundle in dist/: load-worker-pod-main.min.cjs. */
export function prebuiltFileName(spec: BundleSpec): string {
  const abs = spec.entry.startsWith('/') ? spec.entry : join(PROJECT_ROOT, spec.entry);
  return `${bundleName(abs)}${spec.minify ? '.min' : ''}.${spec.format === 'cjs' ? 'cjs' : 'mjs'}`;
}

function prebuiltBundle(abs: string, opts: Omit<BundleSpec, 'entry'>): string {
  const file = join(PROJECT_ROOT, PREBUILT_DIR, prebuiltFileName({ entry: abs, ...opts }));
  if (!existsSync(file)) {
    throw new Error(
      `neither ${abs} (a checkout) nor ${file} (a package built by npm pack) exists: reinstall attestorm (src/cli/prebuild.ts lists what npm pack builds)`,
    );
  }
  return file;
}

/** Builds spec into dir under its prebuilt name (npm pack's prepack step, into an emptied dist/). */
export async function prebuildBundle(spec: BundleSpec, dir: string): Promise<string> {
  const abs = join(PROJECT_ROOT, spec.entry);
  const out = join(dir, prebuiltFileName(spec));
  return bundleOnce({ entry: abs, out, prefix: `${bundleName(abs)}.`, external: NATIVE_EXTERNAL, minify: spec.minify ?? false, format: spec.format ?? 'esm' });
}

/** A CLI entry (main, agent-main) under the name bin/attestorm.js runs in a package: dist/cli-<name>.mjs. */
export async function prebuildCliBundle(name: 'main' | 'agent-main', dir: string): Promise<string> {
  return bundleOnce({
    entry: join(PROJECT_ROOT, 'src', 'cli', `${name}.ts`),
    out: join(dir, `cli-${name}.mjs`),
    prefix: `cli-${name}.`,
    external: CLI_EXTERNAL,
  });
}
