// Puts a variant's filler pods on the agent's node and waits until the kubelet has listed every one
// (it rejects each at admission and reports it Failed): from then on /pods carries them all.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { applyObjects } from './apply.js';
import { ROLE_LABEL } from '../../kube/index.js';
import type { RenderContext } from '../../kube/index.js';
import { fillerCount, renderFillerPods } from '../../kube/index.js';
import { waitFor } from './wait.js';

export interface FillerResult {
  count: number;
  /** Bytes of the filler pods' JSON as applied (the kubelet serves each with its status on top). */
  specBytes: number;
}

export async function placeFillerPods(kc: KubeConfig, ctx: RenderContext, nodeName: string, signal: AbortSignal, timeoutMs = 120_000): Promise<FillerResult> {
  const count = fillerCount(ctx);
  if (count === 0) return { count: 0, specBytes: 0 };
  const pods = renderFillerPods(ctx, nodeName, count);
  await applyObjects(kc, pods);
  const core = kc.makeApiClient(CoreV1Api);
  let listed = 0;
  await waitFor(
    `the kubelet on ${nodeName} did not list the ${count} filler pods in ${ctx.namespace}`,
    async () => {
      const list = await core.listNamespacedPod({ namespace: ctx.namespace, labelSelector: `${ROLE_LABEL}=filler` });
      listed = list.items.filter((p) => p.status?.phase === 'Failed' || p.status?.phase === 'Succeeded').length;
      return listed >= count;
    },
    { timeoutMs, pollMs: 500, signal },
  );
  return { count, specBytes: pods.reduce((n, p) => n + JSON.stringify(p).length, 0) };
}
