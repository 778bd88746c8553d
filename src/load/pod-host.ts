// Where pod processes run. The sandbox (src/sandbox) is the real host: kubelet-named cgroups, pod
// UIDs, churn. The generator codes against this slice of it, so it also runs with plain local
// processes (no cgroups, no pod identity) when pointed at an agent without a sandbox.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { stopChild } from '../util/index.js';

/** What the generator needs to know about a pod. The sandbox's SandboxPod has these and more. */
export interface LoadPod {
  uid: string;
  name: string;
  /** Which set the pod belongs to; absent = storm. */
  group?: 'storm' | 'bystanders';
  /**
   * True when the pod's processes share a CPU cgroup of their own, so the scheduler weighs them
   * against the agent and other pods as one group (a sandbox pod with a cpu cgroup, a kind container).
   */
  cpuGroup?: boolean;
}

/** The part of the sandbox the generator uses; the sandbox satisfies it structurally. */
export interface PodHost<P extends LoadPod = LoadPod> {
  /** Starts the pods, each running podMain's process; under churn calls podMain again for replacements. */
  startPods(podMain: (pod: P) => ChildProcess): Promise<void>;
  /** Spawns a process inside the pod (its cgroup, its OS user). */
  spawnInPod(pod: P, command: string, args: string[], options: SpawnOptions): ChildProcess;
  /** Ends all pods and their processes (and any churn). */
  stopPods(): Promise<void>;
  /**
   * Starts `count` extra storm pods while the load runs (a burst's wave), each running podMain's
   * process; absent = the host cannot grow the storm.
   */
  addPods?(count: number, podMain: (pod: P) => ChildProcess): Promise<P[]>;
  /** Ends pods that addPods started (their processes; the host's own clean-up). */
  endPods?(pods: readonly P[]): Promise<void>;
  /**
   * A path to file that the pods' processes can read (a copy when they run as another uid that
   * cannot reach it); absent = the pods run as this process's uid and read it where it is.
   */
  shareWithPods?(file: string): string;
  /** Bystander pods the host starts after the storm's (absent = none). */
  readonly bystanderPods?: number;
}

/**
 * Pods as plain child processes of this one: same cgroup, same user, synthetic names. What the
 * agent sees is then only distinct PIDs — useful against a real agent where no sandbox can run.
 */
export function localPodHost(pods: number, bystanderPods = 0): PodHost {
  const children: ChildProcess[] = [];
  const list: LoadPod[] = [
    ...Array.from({ length: pods }, (_, i) => ({ uid: randomUUID(), name: `load-pod-${i}`, group: 'storm' as const })),
    ...Array.from({ length: bystanderPods }, (_, i) => ({ uid: randomUUID(), name: `bystander-pod-${i}`, group: 'bystanders' as const })),
  ];
  const extra = new Map<string, ChildProcess>();
  return {
    bystanderPods,
    async startPods(podMain) {
      for (const pod of list) children.push(podMain(pod));
    },
    async addPods(count, podMain) {
      return Array.from({ length: count }, () => {
        const pod: LoadPod = { uid: randomUUID(), name: `load-pod-extra-${extra.size}`, group: 'storm' };
        const child = podMain(pod);
        children.push(child);
        extra.set(pod.uid, child);
        return pod;
      });
    },
    async endPods(pods) {
      await Promise.all(pods.map((p) => extra.get(p.uid)).map((c) => (c ? stopChild(c, 3000) : undefined)));
    },
    spawnInPod(_pod, command, args, options) {
      return spawn(command, args, options);
    },
    async stopPods() {
      await Promise.all(children.map((c) => stopChild(c, 3000)));
    },
  };
}
