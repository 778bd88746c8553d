// Images imported into a node's containerd reach the node's status (what the preflight reads) only
// at the kubelet's next status update: wait for them before the first variant instead of failing.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { RunError } from '../../errors.js';
import { sleep } from '../../util/index.js';
import { normalizeImage } from './preflight.js';

export async function waitForNodeImages(kc: KubeConfig, images: string[], opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<void> {
  const want = images.map(normalizeImage);
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  let missing = want;
  while (!opts.signal?.aborted) {
    const nodes = (await kc.makeApiClient(CoreV1Api).listNode()).items;
    const listed = new Set(nodes.flatMap((n) => (n.status?.images ?? []).flatMap((i) => i.names ?? [])).map(normalizeImage));
    missing = want.filter((i) => !listed.has(i));
    if (!missing.length || Date.now() >= deadline) break;
    await sleep(2000, opts.signal);
  }
  if (missing.length)
    throw new RunError(
      `preflight (images): ${missing.join(', ')} imported into the node's containerd but not listed in any node's status after ${Math.round((opts.timeoutMs ?? 60_000) / 1000)} s (the kubelet lists at most its largest 50 images)`,
    );
}
