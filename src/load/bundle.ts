// The pod-process and worker entries, bundled once into plain JavaScript so that hundreds of
// workers start with plain node: no TypeScript loader in each of them, one file to parse.
import { bundleSpec, type BundleSpec } from '../util/index.js';
import { buildNativeWorker, type NativeBuildOptions } from './native/build.js';
import type { LoadClient } from './worker/messages.js';

export interface LoadBundles {
  pod: string;
  /** The worker bundle (node), or for the native client the worker binary. */
  worker: string;
  /** The client the workers really run: h2 where native was asked for and could not be built. */
  client: LoadClient;
  /** Why native was asked for but h2 runs instead (absent otherwise). */
  fallback?: string;
}

// One worker entry per client, so an h2 worker's bundle holds no grpc-js (nor protobufjs, which
// grpc-js pulls in): the source of every module bundled stays in each worker's heap.
// Minified: hundreds of workers each keep the bundle's source in their heap (measured: idle worker
// PSS 17.4 → 15.4 MiB). CommonJS: each of hundreds of processes skips initialising node's ESM loader.
const POD_BUNDLE: BundleSpec = { entry: 'src/load/worker/pod-main.ts', minify: true, format: 'cjs' };
const WORKER_BUNDLES: Record<Exclude<LoadClient, 'native'>, BundleSpec> = {
  h2: { entry: 'src/load/worker/worker-main-h2.ts', minify: true, format: 'cjs' },
  'grpc-js': { entry: 'src/load/worker/worker-main-grpc-js.ts', minify: true, format: 'cjs' },
};
/** Every bundle the load generator starts (an installed package ships them prebuilt). */
export const LOAD_BUNDLES: readonly BundleSpec[] = [POD_BUNDLE, ...Object.values(WORKER_BUNDLES)];

const cached = new Map<LoadClient, Promise<LoadBundles>>();

/**
 * The native worker where it can be built (the system C compiler, once, then cached), otherwise the
 * h2 bundles with the reason, which the caller prints and records.
 */
export async function loadNativeBundles(opts: NativeBuildOptions = {}): Promise<LoadBundles> {
  const [built, h2] = await Promise.all([buildNativeWorker(opts), loadBundles('h2')]);
  if (built.ok) return { pod: h2.pod, worker: built.binary, client: 'native' };
  return { ...h2, fallback: `client native unavailable, running h2 workers instead: ${built.reason}` };
}

export function loadBundles(client: LoadClient): Promise<LoadBundles> {
  if (client === 'native') return loadNativeBundles();
  let p = cached.get(client);
  if (!p) {
    p = Promise.all([bundleSpec(POD_BUNDLE), bundleSpec(WORKER_BUNDLES[client])]).then(
      ([pod, worker]) => ({ pod, worker, client }),
      (err: unknown) => {
        cached.delete(client);
        throw err;
      },
    );
    cached.set(client, p);
  }
  return p;
}

/**
 * Node flags for workers. A 1 MiB young generation instead of the default 16 MiB semi-spaces: a
 * worker's live data is a few histograms and one call, and the default lets every worker touch
 * megabytes of nursery it never needs. --expose-gc lets a worker collect its old generation once
 * it passes a bound (see worker-loop.ts) instead of letting garbage accumulate.
 */
export const WORKER_EXEC_ARGV = ['--max-semi-space-size=1', '--expose-gc'];

/**
 * Environment added for workers. One glibc malloc arena instead of one per thread that allocates
 * (main, V8's GC and compiler threads): a worker's native allocations are small and brief, and
 * spare arenas each keep freed pages. Measured: median worker USS mid-storm 14.1 → 13.2 MiB.
 * Other C libraries ignore the variable.
 */
export const WORKER_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '1' };

/**
 * Nice value of the workers inside a pod with a CPU cgroup of its own. The pod process merges its
 * workers' per-second data and forwards it; at equal priority it got one share in workers + 1 and
 * fell up to 14 s behind in quick's storm, so whole stretches of the rate series came out empty and
 * then arrived at once. Within the pod's cgroup a nice value only orders the pod's own processes:
 * the workers together keep the pod's CPU share against the agent and the other pods.
 */
export const WORKER_NICE = 19;
