// Faults in a cluster: the scenario's fault actions that Kubernetes can express through its API,
// carried out by the runner (agent-kill deletes the agent pod, memory-squeeze resizes the agent
// container in place, pod-churn deletes storm pods and re-creates them under new names), and a
// rule naming every action it cannot, checked before anything is applied.
import { CoreV1Api, PatchStrategy, setHeaderOptions, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { FaultNotApplied, type Fault, type FaultAction, type FaultStarters } from '../../fault/index.js';
import { formatMiB } from '../../util/index.js';
import { quantity } from '../../kube/index.js';

/** Why each action is not mapped in a cluster; absent = mapped. */
export const CLUSTER_FAULT_REFUSALS: Partial<Record<FaultAction, string>> = {
  'agent-pause': "Kubernetes has no API to freeze a running container (the cgroup freezer is the node's)",
  'cpu-throttle': "the agent pod has no CPU limit to lower in place (a CPU limit would throttle every variant's baseline)",
  'kubelet-latency': "the kubelet is the cluster's real one, not the harness's emulator",
  'kubelet-errors': "the kubelet is the cluster's real one, not the harness's emulator",
  'kubelet-down': "the kubelet is the cluster's real one, not the harness's emulator",
  'kubelet-stall': "the kubelet is the cluster's real one, not the harness's emulator",
  'slow-clients': "it opens connections to the agent's socket, which is on the cluster's node, not on this machine",
  burst: 'extra storm workers mid-run are not supported by the generator pods yet',
};

/** Kubernetes version that serves the pod `resize` subresource (in-place resize, beta and on by default). */
export const RESIZE_MIN_MINOR = 33;

/** Every fault a cluster run cannot carry out, each naming the fault and the rule; empty when all can run. */
export function clusterFaultProblems(faults: readonly Fault[], where = ''): string[] {
  return faults.flatMap((f, i) => {
    const why = CLUSTER_FAULT_REFUSALS[f.action];
    return why ? [`${where}faults[${i}] (${f.action}) cannot run in kind mode: ${why}; remove it or run locally`] : [];
  });
}

/** Faults the cluster's version cannot take (memory-squeeze needs the resize subresource), from preflight's server version. */
export function clusterVersionProblems(faults: readonly Fault[], serverVersion: string): string[] {
  const m = /^v?(\d+)\.(\d+)/.exec(serverVersion);
  const old = m !== null && (Number(m[1]) < 1 || (Number(m[1]) === 1 && Number(m[2]) < RESIZE_MIN_MINOR));
  if (!old) return [];
  return faults.flatMap((f, i) =>
    f.action === 'memory-squeeze'
      ? [
          `faults[${i}] (memory-squeeze) needs in-place pod resize (the pod resize subresource, Kubernetes >= 1.${RESIZE_MIN_MINOR}); the cluster's API server is ${serverVersion}`,
        ]
      : [],
  );
}

export interface ClusterFaultHooks {
  kc: KubeConfig;
  namespace: string;
  /** The agent container's name in the agent pod. */
  container: string;
  /** The agent pod as the watch last showed it (null while none runs). */
  agentPod(): V1Pod | null;
  /** Records the deletion as the agent's death (before the DELETE is sent: its late status updates are ignored). */
  agentDeleted(uid: string, detail: string): void;
  /** Resolves true once a pod other than `uid` carries the agent (its controller replaced it), false after `timeoutMs`. */
  agentReplaced(uid: string, timeoutMs: number): Promise<boolean>;
  /** Deletes `count` storm pods and re-creates them under new names; resolves with what was done. */
  churnPods(count: number): Promise<string>;
}

/** How long agent-kill waits for the replacement pod (recovery is measured from then on). */
const REPLACE_WAIT_MS = 60_000;

const apiMessage = (err: unknown) => {
  const e = err as { code?: number; body?: unknown; message?: string };
  let body = typeof e.body === 'string' ? e.body : '';
  try {
    body = (JSON.parse(body) as { message?: string }).message ?? body;
  } catch {
    // Not JSON: keep the text.
  }
  return `${e.code ? `HTTP ${e.code}: ` : ''}${body || e.message}`;
};

/** The starters a cluster target uses for the mapped actions (FaultTarget.actions). */
export function clusterFaultActions(h: ClusterFaultHooks): FaultStarters {
  const api = h.kc.makeApiClient(CoreV1Api);
  const current = () => {
    const pod = h.agentPod();
    if (!pod?.metadata?.name || !pod.metadata.uid) throw new FaultNotApplied('no agent pod is running (e.g. replaced after an earlier fault and not up yet)');
    return { name: pod.metadata.name, uid: pod.metadata.uid, pod };
  };
  const resizeMemory = async (name: string, bytes: number) => {
    const q = quantity(bytes);
    // requests = limits, as rendered (a request above the limit is invalid; the QoS class must not change).
    const body = { spec: { containers: [{ name: h.container, resources: { requests: { memory: q }, limits: { memory: q } } }] } };
    await api.patchNamespacedPodResize({ name, namespace: h.namespace, body }, setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch));
  };

  return {
    'agent-kill': async (f) => {
      const { name, uid } = current();
      // SIGKILL: no grace period (the kubelet kills at once); SIGTERM: the pod's own grace period.
      const grace = f.signal === 'SIGKILL' ? 'grace period 0, as SIGKILL' : "the pod's grace period, SIGTERM first";
      h.agentDeleted(uid, `agent pod ${name} deleted by fault agent-kill (${grace})`);
      const sentAt = Date.now();
      try {
        await api.deleteNamespacedPod({ name, namespace: h.namespace, ...(f.signal === 'SIGKILL' ? { gracePeriodSeconds: 0 } : {}) });
      } catch (err) {
        throw new FaultNotApplied(`deleting agent pod ${name} was refused: ${apiMessage(err)}`);
      }
      const replaced = await h.agentReplaced(uid, REPLACE_WAIT_MS);
      const took = Date.now() - sentAt;
      return {
        detail: `deleted agent pod ${name} (${grace}); ${replaced ? `its DaemonSet replaced it after ${took} ms` : `no replacement within ${took} ms`}`,
      };
    },

    'memory-squeeze': async (f) => {
      const { name, pod } = current();
      const was = pod.spec?.containers?.find((c) => c.name === h.container)?.resources?.limits?.memory;
      if (was === undefined) throw new FaultNotApplied(`agent pod ${name} has no memory limit to squeeze`);
      try {
        await resizeMemory(name, f.to);
      } catch (err) {
        throw new FaultNotApplied(`resizing agent pod ${name} was refused (in-place resize needs Kubernetes >= 1.${RESIZE_MIN_MINOR}): ${apiMessage(err)}`);
      }
      return {
        detail: `memory limit ${was} → ${formatMiB(f.to)} (agent pod ${name}, resize subresource)`,
        end: async () => {
          // Restored on whichever pod carries the agent now (a squeeze may have ended in a replacement).
          const now = h.agentPod()?.metadata?.name ?? name;
          const back = typeof was === 'string' ? was : String(was);
          await api.patchNamespacedPodResize(
            {
              name: now,
              namespace: h.namespace,
              body: { spec: { containers: [{ name: h.container, resources: { requests: { memory: back }, limits: { memory: back } } }] } },
            },
            setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
          );
          return `memory limit restored to ${back} (agent pod ${now})`;
        },
      };
    },

    'pod-churn': async (f) => ({ detail: await h.churnPods(f.count) }),
  };
}
