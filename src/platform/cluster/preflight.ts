// Before anything is applied: the API server answers, and the images the variant needs are on a
// node (the project's image is loaded with `kind load`, never pulled) or can be pulled by it.
// Each failure names its step; the CLI maps them to exit 3.
import { CoreV1Api, VersionApi, type KubeConfig, type V1DaemonSetSpec, type V1PodSpec } from '@kubernetes/client-node';
import { RunError } from '../../errors.js';
import type { KubeObject } from '../../kube/index.js';

export interface PreflightResult {
  serverVersion: string;
  nodes: Array<{ name: string; uid: string; kubeletVersion: string; containerRuntime: string; kernel: string; images: string[] }>;
  /** Images not on any node that the node will pull (public registries). */
  toPull: string[];
  /** Image → digest as the node lists it (`repo@sha256:…`), for results.json; absent when unknown. */
  digests: Record<string, string>;
}

/** docker.io/library/attestorm:dev and attestorm:dev are the same image; so are tags with and without docker.io. */
export function normalizeImage(ref: string): string {
  let r = ref.replace(/@sha256:[0-9a-f]+$/, '');
  if (!/:[^/]+$/.test(r)) r = `${r}:latest`;
  const first = r.split('/')[0]!;
  const hasRegistry = r.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
  if (!hasRegistry) r = r.includes('/') ? `docker.io/${r}` : `docker.io/library/${r}`;
  return r;
}

/** Every container image the objects use. */
export function imagesOf(objects: KubeObject[]): string[] {
  const out = new Set<string>();
  for (const o of objects) {
    const spec = o.kind === 'Pod' ? (o.spec as V1PodSpec | undefined) : (o.spec as V1DaemonSetSpec | undefined)?.template?.spec;
    for (const c of [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])]) if (c.image) out.add(c.image);
  }
  return [...out];
}

function describe(err: unknown): string {
  const e = err as { code?: number | string; message?: string; cause?: { code?: string } };
  return e.cause?.code ?? (typeof e.code === 'number' ? `HTTP ${e.code}` : e.code) ?? e.message ?? String(err);
}

/** How long a locally built image may take to show in a node's status after `kind load` (two kubelet status updates). */
const IMAGE_REPORT_WAIT_MS = 20_000;

async function listNodes(kc: KubeConfig): Promise<{ nodes: PreflightResult['nodes']; imageEntries: string[][] }> {
  try {
    const list = await kc.makeApiClient(CoreV1Api).listNode();
    const nodes = list.items.map((n) => ({
      name: n.metadata?.name ?? '',
      uid: n.metadata?.uid ?? '',
      kubeletVersion: n.status?.nodeInfo?.kubeletVersion ?? '',
      containerRuntime: n.status?.nodeInfo?.containerRuntimeVersion ?? '',
      kernel: n.status?.nodeInfo?.kernelVersion ?? '',
      images: (n.status?.images ?? []).flatMap((i) => i.names ?? []).map(normalizeImage),
    }));
    if (!nodes.length) throw new RunError('preflight (nodes): the cluster has no nodes');
    return { nodes, imageEntries: list.items.flatMap((n) => (n.status?.images ?? []).map((i) => i.names ?? [])) };
  } catch (err) {
    if (err instanceof RunError) throw err;
    throw new RunError(`preflight (nodes): cannot list the cluster's nodes: ${describe(err)}`, { cause: err });
  }
}

export async function preflight(
  kc: KubeConfig,
  objects: KubeObject[],
  opts: { localImages: string[]; timeoutMs?: number; imageWaitMs?: number },
): Promise<PreflightResult> {
  const server = kc.getCurrentCluster()?.server ?? '(none)';
  let serverVersion: string;
  try {
    const v = await withTimeout(kc.makeApiClient(VersionApi).getCode(), opts.timeoutMs ?? 10_000, `no answer from ${server}`);
    serverVersion = v.gitVersion;
  } catch (err) {
    throw new RunError(`preflight (api-server): the API server of context ${kc.getCurrentContext()} at ${server} is not reachable: ${describe(err)}`, {
      cause: err,
    });
  }
  const local = new Set(opts.localImages.map(normalizeImage));
  let { nodes, imageEntries } = await listNodes(kc);
  // An image `kind load` has just put on a node shows in the node's status only with the kubelet's
  // next status update (every 10 s by default): wait for it before calling it missing.
  const notYetListed = () => imagesOf(objects).some((i) => local.has(normalizeImage(i)) && !nodes.some((node) => node.images.includes(normalizeImage(i))));
  const until = Date.now() + (opts.imageWaitMs ?? IMAGE_REPORT_WAIT_MS);
  while (notYetListed() && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 1000));
    ({ nodes, imageEntries } = await listNodes(kc));
  }
  const toPull: string[] = [];
  for (const image of imagesOf(objects)) {
    const n = normalizeImage(image);
    if (nodes.some((node) => node.images.includes(n))) continue;
    if (local.has(n)) {
      throw new RunError(
        `preflight (images): image ${image} is built locally and is not on node ${nodes.map((x) => x.name).join(', ')}: ` +
          `docker build -t ${image} . && kind load docker-image ${image} --name <cluster>`,
      );
    }
    toPull.push(image);
  }
  // One node image entry lists a tag name and the repo@sha256 digest name of the same image.
  const digests: Record<string, string> = {};
  for (const image of imagesOf(objects)) {
    const entry = imageEntries.find((names) => names.map(normalizeImage).includes(normalizeImage(image)));
    const digest = entry?.find((n) => n.includes('@sha256:'));
    if (digest) digests[image] = digest;
  }
  return { serverVersion, nodes, toPull, digests };
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms))),
  ]);
}
