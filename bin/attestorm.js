#!/usr/bin/env node
// The attestorm CLI. In a checkout the TypeScript sources are bundled once into plain JavaScript
// (esbuild, cached in node_modules/.cache/attestorm, rebuilt when a source changes); an installed
// package ships no TypeScript and runs the bundles `npm pack` built into dist/. Either way every
// entry point — the CLI, `attestorm agent`, the runner's agents and workers — runs compiled code.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));

// `attestorm agent` runs from an entry of its own: the agent's process loads nothing else.
const name = process.argv[2] === 'agent' ? 'agent-main' : 'main';
const entry = join(root, 'src', 'cli', `${name}.ts`);
let out = join(root, 'dist', `cli-${name}.mjs`);
if (existsSync(entry)) {
  const { bundleOnce, CLI_EXTERNAL, newestSourceMtime } = await import('../src/util/esbuild-bundle.mjs');
  const hash = createHash('sha256')
    .update(entry)
    .update(String(newestSourceMtime(join(root, 'src'))))
    .digest('hex')
    .slice(0, 12);
  out = join(root, 'node_modules', '.cache', 'attestorm', `cli-${name}-${hash}.mjs`);
  await bundleOnce({ entry, out, prefix: `cli-${name}-`, external: CLI_EXTERNAL });
} else if (!existsSync(out)) {
  process.stderr.write(`attestorm: neither ${entry} (a checkout) nor ${out} (a package built by npm pack) exists: reinstall attestorm\n`);
  process.exit(3);
}
await import(pathToFileURL(out).href);
