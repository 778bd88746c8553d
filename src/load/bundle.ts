// The pod-process and worker entries, bundled once into plain JavaScript so that hundreds of
// workers start with plain node: no TypeScript loader in each of them, one file to parse.
import { bundleEntry } from '../util/index.js';

export interface LoadBundles {
  pod: string;
  worker: string;
}

let cached: Promise<LoadBundles> | null = null;

export function loadBundles(): Promise<LoadBundles> {
  // Minified: hundreds of workers each keep the bundle's source in their heap (measured: idle
  // worker PSS 17.4 → 15.4 MiB).
  cached ??= Promise.all([bundleEntry('src/load/worker/pod-main.ts', { minify: true }), bundleEntry('src/load/worker/worker-main.ts', { minify: true })]).then(
    ([pod, worker]) => ({ pod, worker }),
    (err: unknown) => {
      cached = null;
      throw err;
    },
  );
  return cached;
}

/**
 * Node flags for workers. A 1 MiB young generation instead of the default 16 MiB semi-spaces: a
 * worker's live data is a few histograms and one call, and the default lets every worker touch
 * megabytes of nursery it never needs. --expose-gc lets a worker collect its old generation once
 * it passes a bound (see worker-main.ts) instead of letting garbage accumulate.
 */
export const WORKER_EXEC_ARGV = ['--max-semi-space-size=1', '--expose-gc'];
