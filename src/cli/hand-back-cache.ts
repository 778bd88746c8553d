// The build cache in the checkout (node_modules/.cache/attestorm: the CLI's and workers' bundles,
// the native worker) stays the checkout owner's after `sudo attestorm …`: root's entries are handed
// to the owner of node_modules (not the sudo caller: a root-owned checkout's cache stays root's).
import { lchownSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
import { handBackOwner, handBackTree, PROJECT_ROOT } from '../util/index.js';

export function handBackCache(): void {
  const modules = join(PROJECT_ROOT, 'node_modules');
  const owner = handBackOwner(modules, process.env, false);
  if (!owner) return;
  try {
    // .cache itself only: other tools' caches in it are theirs to mind.
    const cache = join(modules, '.cache');
    if (lstatSync(cache, { throwIfNoEntry: false })?.uid === 0) lchownSync(cache, owner.uid, owner.gid);
    handBackTree(join(cache, 'attestorm'), owner);
  } catch (err) {
    process.stderr.write(`attestorm: cannot hand the build cache back to uid ${owner.uid}: ${(err as Error).message}\n`);
  }
}
