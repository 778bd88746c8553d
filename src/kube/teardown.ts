// Removing what a variant run created: its namespace (which takes everything namespaced with it)
// and its cluster-scoped RBAC, found by label. `cleanupCluster` does the same for every run that
// left something behind (killed runner, lost connection).
import { CoreV1Api, RbacAuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { MANAGED_SELECTOR, RUN_LABEL } from './names.js';

const notFound = (err: unknown) => (err as { code?: number }).code === 404;

async function deleteClusterRbac(kc: KubeConfig, selector: string, dryRun: boolean): Promise<string[]> {
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  const removed: string[] = [];
  for (const b of (await rbac.listClusterRoleBinding({ labelSelector: selector })).items) {
    removed.push(`clusterrolebinding/${b.metadata!.name}`);
    if (!dryRun) await rbac.deleteClusterRoleBinding({ name: b.metadata!.name! }).catch((e) => void (notFound(e) || Promise.reject(e)));
  }
  for (const r of (await rbac.listClusterRole({ labelSelector: selector })).items) {
    removed.push(`clusterrole/${r.metadata!.name}`);
    if (!dryRun) await rbac.deleteClusterRole({ name: r.metadata!.name! }).catch((e) => void (notFound(e) || Promise.reject(e)));
  }
  return removed;
}

/** Deletes one variant run's namespace and cluster-scoped objects. Idempotent. */
export async function teardownVariant(kc: KubeConfig, namespace: string): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  await core.deleteNamespace({ name: namespace }).catch((e) => {
    if (!notFound(e)) throw e;
  });
  // Cluster-scoped objects carry the namespace in their name and the run's labels.
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  for (const b of (await rbac.listClusterRoleBinding({ labelSelector: MANAGED_SELECTOR })).items) {
    if (b.metadata?.name?.startsWith(`${namespace}-`)) await rbac.deleteClusterRoleBinding({ name: b.metadata.name }).catch((e) => void (notFound(e) || Promise.reject(e)));
  }
  for (const r of (await rbac.listClusterRole({ labelSelector: MANAGED_SELECTOR })).items) {
    if (r.metadata?.name?.startsWith(`${namespace}-`)) await rbac.deleteClusterRole({ name: r.metadata.name }).catch((e) => void (notFound(e) || Promise.reject(e)));
  }
}

/** Every namespace and cluster-scoped object attestorm created, in any run (or in one run). */
export async function cleanupCluster(kc: KubeConfig, opts: { dryRun?: boolean; runId?: string } = {}): Promise<string[]> {
  const selector = opts.runId ? `${MANAGED_SELECTOR},${RUN_LABEL}=${opts.runId}` : MANAGED_SELECTOR;
  const core = kc.makeApiClient(CoreV1Api);
  const removed: string[] = [];
  for (const ns of (await core.listNamespace({ labelSelector: selector })).items) {
    const name = ns.metadata!.name!;
    removed.push(`namespace/${name}`);
    if (!opts.dryRun) await core.deleteNamespace({ name }).catch((e) => void (notFound(e) || Promise.reject(e)));
  }
  removed.push(...(await deleteClusterRbac(kc, selector, opts.dryRun ?? false)));
  return removed;
}
