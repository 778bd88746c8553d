// A pod watch that stays open: client-node's Watch ends when the server closes the stream (every
// few minutes on a real API server); it is reopened from the last resourceVersion until stopped.
import { Watch, type KubeConfig, type V1Pod } from '@kubernetes/client-node';

export interface PodWatch {
  stop(): void;
}

export function watchPods(
  kc: KubeConfig,
  namespace: string,
  labelSelector: string,
  onPod: (type: string, pod: V1Pod) => void,
  onError: (err: Error) => void,
): PodWatch {
  const watch = new Watch(kc);
  let stopped = false;
  let controller: AbortController | null = null;
  let resourceVersion: string | undefined;
  let failures = 0;
  const open = async () => {
    if (stopped) return;
    try {
      controller = await watch.watch(
        `/api/v1/namespaces/${namespace}/pods`,
        { labelSelector, allowWatchBookmarks: true, ...(resourceVersion ? { resourceVersion } : {}) },
        (type, obj: V1Pod) => {
          failures = 0;
          if (obj?.metadata?.resourceVersion) resourceVersion = obj.metadata.resourceVersion;
          if (type !== 'BOOKMARK' && type !== 'ERROR') onPod(type, obj);
        },
        (err) => {
          if (stopped) return;
          if (err && ++failures > 5) return onError(new Error(`pod watch of ${namespace} failed ${failures} times: ${(err as Error).message ?? err}`));
          // A 410 Gone (resourceVersion too old) starts again from the current state.
          if ((err as { statusCode?: number })?.statusCode === 410) resourceVersion = undefined;
          setTimeout(() => void open(), err ? 500 : 0);
        },
      );
      if (stopped) controller.abort();
    } catch (err) {
      if (stopped) return;
      if (++failures > 5) return onError(err as Error);
      setTimeout(() => void open(), 500);
    }
  };
  void open();
  return {
    stop() {
      stopped = true;
      controller?.abort();
    },
  };
}
