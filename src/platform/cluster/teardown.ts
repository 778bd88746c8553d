// Removing what a variant run created: its namespace (which takes everything namespaced with it),
// its cluster-scoped RBAC, found by label, and its socket directory on the nodes. `cleanupCluster`
// does the same for every run that left something behind (killed runner, lost connection).
import { CoreV1Api, RbacAuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { labels, MANAGED_SELECTOR, RUN_LABEL } from '../../kube/index.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { removeSocketDirs, type SocketDirSelection } from './socket-janitor.js';
import { nodeNotReady } from './agent-node.js';
import { applyObjects } from './apply.js';
import { DEFAULT_IMAGES } from '../../kube/index.js';

const notFound = (err: unknown) => (err as { code?: number }).code === 404;
/** A delete's failure, except that the object is already gone. */
const ignoreNotFound = (err: unknown): void => {
  if (!notFound(err)) throw err;
};

async function deleteClusterRbac(kc: KubeConfig, selector: string, dryRun: boolean): Promise<string[]> {
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  const removed: string[] = [];
  for (const b of (await rbac.listClusterRoleBinding({ labelSelector: selector })).items) {
    removed.push(`clusterrolebinding/${b.metadata!.name}`);
    if (!dryRun) await rbac.deleteClusterRoleBinding({ name: b.metadata!.name! }).catch(ignoreNotFound);
  }
  for (const r of (await rbac.listClusterRole({ labelSelector: selector })).items) {
    removed.push(`clusterrole/${r.metadata!.name}`);
    if (!dryRun) await rbac.deleteClusterRole({ name: r.metadata!.name! }).catch(ignoreNotFound);
  }
  return removed;
}

/**
 * Pods of the `namespaces` being deleted that are bound to a node whose kubelet no longer serves
 * (`lost`, or NotReady): no kubelet will confirm their graceful deletion, so they would hold their
 * namespace in Terminating for ever. They are deleted at once (grace period 0); the node took their
 * processes with it.
 */
async function forceDeleteStranded(kc: KubeConfig, namespaces: string[], lost: string[]): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  const down = new Set(lost);
  for (const n of (await core.listNode()).items) if (nodeNotReady(n)) down.add(n.metadata!.name!);
  if (!down.size) return;
  for (const namespace of namespaces) {
    for (const pod of (await core.listNamespacedPod({ namespace })).items) {
      if (!down.has(pod.spec?.nodeName ?? '')) continue;
      await core.deleteNamespacedPod({ name: pod.metadata!.name!, namespace, gracePeriodSeconds: 0 }).catch(ignoreNotFound);
    }
  }
}

const warn = (problems: string[]) => {
  for (const p of problems) process.stderr.write(`attestorm: ${p}; the socket directory stays on the node (attestorm kind cleanup removes it)\n`);
};

/**
 * Once the namespaces `doomed` are gone, removes socket directories on the nodes from a janitor
 * namespace of its own: while a namespace's pods still run, the kubelet re-creates their hostPath
 * directory (DirectoryOrCreate) whenever one restarts — an agent after an OOM kill, a pod still
 * starting in a killed run. Returns whether the janitors finished on every node.
 */
async function sweepSocketDirsOnceGone(
  kc: KubeConfig,
  doomed: string[],
  o: { remove: SocketDirSelection; image?: string; runId?: string; namespaceGoneMs?: number; lostNodes?: string[] },
): Promise<boolean> {
  const core = kc.makeApiClient(CoreV1Api);
  const waitMs = o.namespaceGoneMs ?? 180_000;
  const until = Date.now() + waitMs;
  let left = doomed;
  while (left.length && Date.now() < until) {
    const now = new Set((await core.listNamespace()).items.map((n) => n.metadata!.name!));
    left = left.filter((n) => now.has(n));
    if (left.length) await forceDeleteStranded(kc, left, o.lostNodes ?? []);
    if (left.length) await sleep(1000);
  }
  if (left.length) warn([`namespace(s) ${left.join(', ')} still terminating after ${waitMs / 1000} s`]);
  const janitorNs = `attestorm-janitor-${Date.now().toString(36)}`;
  await applyObjects(kc, [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: janitorNs, labels: labels(o.runId ?? 'cleanup', 'janitor') } }]);
  try {
    const problems = await removeSocketDirs(kc, {
      namespace: janitorNs,
      image: o.image ?? DEFAULT_IMAGES.project,
      remove: o.remove,
      runId: o.runId ?? 'cleanup',
      ...(o.lostNodes ? { lostNodes: o.lostNodes } : {}),
    });
    warn(problems);
    return !problems.length && !left.length;
  } finally {
    await core.deleteNamespace({ name: janitorNs }).catch(() => undefined);
  }
}

/** Deletes one variant run's namespace and cluster-scoped objects, then its socket directory on the nodes. Idempotent. */
export async function teardownVariant(
  kc: KubeConfig,
  namespace: string,
  opts: { image?: string; runId?: string; namespaceGoneMs?: number; lostNodes?: string[] } = {},
): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  await core.deleteNamespace({ name: namespace }).catch(ignoreNotFound);
  // Cluster-scoped objects carry the namespace in their name and the run's labels.
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  for (const b of (await rbac.listClusterRoleBinding({ labelSelector: MANAGED_SELECTOR })).items) {
    if (b.metadata?.name?.startsWith(`${namespace}-`)) await rbac.deleteClusterRoleBinding({ name: b.metadata.name }).catch(ignoreNotFound);
  }
  for (const r of (await rbac.listClusterRole({ labelSelector: MANAGED_SELECTOR })).items) {
    if (r.metadata?.name?.startsWith(`${namespace}-`)) await rbac.deleteClusterRole({ name: r.metadata.name }).catch(ignoreNotFound);
  }
  await sweepSocketDirsOnceGone(kc, [namespace], { ...opts, remove: [namespace] }).catch((e: Error) => warn([`socket janitor for ${namespace}: ${e.message}`]));
}

/**
 * Every namespace and cluster-scoped object attestorm created, in any run (or in one run), and the
 * runs' socket directories on the nodes (from a janitor namespace of its own, also labelled).
 */
export async function cleanupCluster(
  kc: KubeConfig,
  opts: { dryRun?: boolean; runId?: string; image?: string; namespaceGoneMs?: number; lostNodes?: string[] } = {},
): Promise<string[]> {
  const selector = opts.runId ? `${MANAGED_SELECTOR},${RUN_LABEL}=${opts.runId}` : MANAGED_SELECTOR;
  const core = kc.makeApiClient(CoreV1Api);
  const removed: string[] = [];
  const doomed = (await core.listNamespace({ labelSelector: selector })).items.map((n) => n.metadata!.name!);
  // Directories of runs whose namespaces are long gone have no name in the API: without a run id,
  // every run's directory goes but those of namespaces that stay.
  const staying = opts.runId
    ? []
    : (await core.listNamespace()).items.map((n) => n.metadata!.name!).filter((n) => !doomed.includes(n) && n.startsWith('atst-'));
  for (const name of doomed) {
    removed.push(`namespace/${name}`);
    if (!opts.dryRun) await core.deleteNamespace({ name }).catch(ignoreNotFound);
  }
  removed.push(...(await deleteClusterRbac(kc, selector, opts.dryRun ?? false)));
  if (opts.dryRun) {
    removed.push(opts.runId ? `socket directories /run/attestorm/{${doomed.join(',')}} on the nodes` : 'socket directories /run/attestorm/atst-* on the nodes');
    return removed;
  }
  if (
    await sweepSocketDirsOnceGone(kc, doomed, {
      remove: opts.runId ? doomed : { allExcept: staying },
      image: opts.image,
      runId: opts.runId,
      namespaceGoneMs: opts.namespaceGoneMs,
      lostNodes: opts.lostNodes,
    })
  ) {
    removed.push(opts.runId ? `socket directories of ${doomed.length} namespace(s) on the nodes` : 'socket directories of runs on the nodes');
  }
  return removed;
}
