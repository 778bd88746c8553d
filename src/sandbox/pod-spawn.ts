// How a process starts inside a pod: in its container cgroup, as the pod's uid and gid, in a
// process group of its own, with the pod's identity in its environment.
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { spawnInCgroup } from '../cgroup/index.js';
import { PlatformError } from '../errors.js';
import type { SandboxPod } from './sandbox-pod.js';

/** What a pod's process needs from its sandbox, read when the process starts. */
export interface PodSpawnContext {
  runId: string;
  kubeletUrl: string;
  /** The run's temp folder: where a pod of another uid starts (the inherited folder may be closed to it). */
  tempDir: string;
  /** Path of setpriv, needed when pods change uid on cgroup v2 (see spawnPodProcess). */
  setpriv: string | null;
}

/** setpriv from PATH, for pods of another uid on cgroup v2; PlatformError when it is not there. */
export function requireSetpriv(): string {
  const setpriv = findInPath('setpriv');
  if (!setpriv)
    throw new PlatformError(
      'sandbox.uidMode "per-pod" and sandbox.bystanders.uid "own" on cgroup v2 need setpriv (util-linux) in PATH to start pod processes as their uid',
    );
  return setpriv;
}

/** Starts command in the pod (see Sandbox.spawnInPod for the environment it gets). */
export function spawnPodProcess(ctx: PodSpawnContext, pod: SandboxPod, command: string, args: readonly string[], options: SpawnOptions): ChildProcess {
  const env = {
    // As with spawn(): a given env replaces the inherited one.
    ...(options.env ?? process.env),
    ATTESTORM_RUN_ID: ctx.runId,
    ATTESTORM_POD_UID: pod.uid,
    ATTESTORM_POD_NAME: pod.name,
    ATTESTORM_POD_NAMESPACE: pod.namespace,
    ATTESTORM_POD_INDEX: String(pod.index),
    ATTESTORM_POD_GROUP: pod.group,
    ATTESTORM_POD_SERVICE_ACCOUNT: pod.serviceAccount,
    ATTESTORM_CONTAINER_ID: pod.containerId,
    ATTESTORM_KUBELET_URL: ctx.kubeletUrl,
  };
  const asOther = pod.osUid !== process.getuid?.() || pod.osGid !== process.getgid?.();
  // A process group of its own: in uid-only fidelity the group is how the pod's tree is found.
  // A pod of another uid starts in the run's temp folder: the inherited folder may be closed to it.
  const spawnOpts: SpawnOptions = { ...(asOther ? { cwd: ctx.tempDir } : {}), ...options, env, detached: true };
  if (asOther && pod.cgroup?.version === 'v2') {
    // v2 lets a process move itself only with write access to the common ancestor's cgroup.procs:
    // it moves as root, then setpriv drops to the pod's uid/gid before exec'ing the command.
    const ids = ['--reuid', String(pod.osUid), '--regid', String(pod.osGid), '--clear-groups', '--'];
    return spawnInCgroup(pod.cgroup, ctx.setpriv!, [...ids, command, ...args], spawnOpts);
  }
  return spawnInCgroup(pod.cgroup, command, args, asOther ? { ...spawnOpts, uid: pod.osUid, gid: pod.osGid } : spawnOpts);
}

function findInPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(':')) {
    const p = join(dir || '.', name);
    if (existsSync(p)) return p;
  }
  return null;
}
