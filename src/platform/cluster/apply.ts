// Server-side apply of rendered objects, field manager `attestorm`. The client serializes through
// its typed models (unknown fields vanish there silently), so objects are checked before this.
import { KubernetesObjectApi, PatchStrategy, type KubeConfig } from '@kubernetes/client-node';
import { RunError } from '../../errors.js';
import { FIELD_MANAGER } from '../../kube/index.js';
import type { KubeObject } from '../../kube/index.js';

export async function applyObjects(kc: KubeConfig, objects: KubeObject[]): Promise<void> {
  const api = KubernetesObjectApi.makeApiClient(kc);
  for (const o of objects) {
    try {
      await api.patch(o, undefined, undefined, FIELD_MANAGER, true, PatchStrategy.ServerSideApply);
    } catch (err) {
      const e = err as { code?: number; body?: unknown; message?: string };
      const body = typeof e.body === 'string' ? e.body : JSON.stringify(e.body ?? '');
      throw new RunError(
        `apply: ${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name} was refused: ${e.code ? `HTTP ${e.code} ` : ''}${body || e.message}`,
        { cause: err },
      );
    }
  }
}
