// The shape of the kubelet's /pods answer as a scenario dimension (agent.kubelet.podList): how many
// pods the node runs, how many containers each of the other pods has, and how many ended pods are
// still listed. Absent, the emulator lists what it always has (the node filled up to 110 pods).
import { z } from 'zod';
import { POD_LIST_LIMITS } from '../sandbox/index.js';

const { nodePods: MAX_PODS, containersPerPod: MAX_CONTAINERS, terminatedPods: MAX_TERMINATED, containers: MAX_LIST_CONTAINERS } = POD_LIST_LIMITS;

const int = (what: string, min: number, max: number) =>
  z
    .number({ error: `must be ${what} from ${min} to ${max}` })
    .int(`must be ${what} from ${min} to ${max}`)
    .min(min, `must be ${what} from ${min} to ${max}`)
    .max(max, `must be ${what} from ${min} to ${max}`);

export const podListSchema = z
  .strictObject({
    pods: int('an integer', 1, MAX_PODS)
      .optional()
      .describe(
        "Running pods the node lists, the run's own storm and bystander pods included; other pods fill up to this many (never fewer than the run's own). Default 110, the kubelet's max-pods",
      ),
    containersPerPod: int('an integer', 1, MAX_CONTAINERS)
      .optional()
      .describe(
        "Containers of each of the other pods, running and terminated (main, its sidecar, then extra sidecars); the run's own pods keep theirs. Default: each app's own, one or two",
      ),
    terminatedPods: int('an integer', 0, MAX_TERMINATED)
      .optional()
      .describe(
        'Pods that have ended (finished Jobs, one in eight failed) and are still listed because the pod garbage collector has not removed them yet. Default 0',
      ),
  })
  .superRefine((v, ctx) => {
    // The containers a list holds bound its size (~3.5 KiB each): ~20 MiB at the limit.
    const containers = ((v.pods ?? 110) + (v.terminatedPods ?? 0)) * (v.containersPerPod ?? 2);
    if (containers > MAX_LIST_CONTAINERS) {
      ctx.addIssue({
        code: 'custom',
        message: `must describe at most ${MAX_LIST_CONTAINERS} containers ((pods + terminatedPods) × containersPerPod, containersPerPod counted as 2 when unset), got ${containers}`,
      });
    }
  })
  .describe(
    "Size of the kubelet's GET /pods answer: pods on the node, containers per pod, terminated pods not yet cleaned up; the size reached is recorded in results.json (podList.bytes)",
  );

export type PodListInput = z.input<typeof podListSchema>;
export type PodList = z.output<typeof podListSchema>;

/** The kubelet.podList block's conflict with the older fillerPods key, which also sizes the node. */
export function podListConflict(kubelet: { fillerPods?: number | undefined; podList?: PodList | undefined }): string | null {
  if (kubelet.fillerPods !== undefined && kubelet.podList?.pods !== undefined) {
    return `must not set both fillerPods and podList.pods (both say how many pods the node runs), got fillerPods ${kubelet.fillerPods} and podList.pods ${kubelet.podList.pods}`;
  }
  return null;
}

/** The kubelet emulator's options for a pod-list shape; nothing for an absent block (today's list). */
export function podListEmulatorOptions(podList: PodList | undefined): { nodePods?: number; containersPerPod?: number; terminatedPods?: number } {
  if (!podList) return {};
  return {
    ...(podList.pods !== undefined ? { nodePods: podList.pods } : {}),
    ...(podList.containersPerPod !== undefined ? { containersPerPod: podList.containersPerPod } : {}),
    ...(podList.terminatedPods !== undefined ? { terminatedPods: podList.terminatedPods } : {}),
  };
}
