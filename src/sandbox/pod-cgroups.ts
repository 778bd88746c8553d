// The cgroups of the sandbox's pods below the run's root, named as the kubelet names them: a
// container cgroup made for each pod and removed with it, then the run's kubepods tree and root.
import { chownSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Cgroup, ownPinnedCpus, procsFiles, removeIfEmpty, removeTree } from '../cgroup/index.js';
import type { ResolvedSandboxOptions } from './options.js';
import { containerCgroupRel, kubepodsDir, type CgroupDriver } from './pod-cgroup-path.js';
import { runCgroupRel } from './run-id.js';
import type { CgroupSetup } from './sandbox-cgroups.js';
import type { SandboxPod } from './sandbox-pod.js';

/** Creates the pod's container cgroup (…/pod<uid>/<containerId>) and sets pod.cgroup and pod.cpuGroup. */
export function placePodInCgroup(cg: CgroupSetup, opts: ResolvedSandboxOptions, pod: SandboxPod): void {
  const rel = `${runCgroupRel(opts.runId)}/${containerCgroupRel(opts.cgroupDriver, opts.qosClass, pod.uid, pod.containerId)}`;
  // v2: a pod moved into its own cgroup leaves the runner's cpuset; it keeps the runner's pinning
  // (CPU isolation) by having it written on its cgroup.
  const cpus = cg.host.version === 'v2' && cg.host.cpusetBase ? ownPinnedCpus() : null;
  pod.cgroup = Cgroup.create(cg.host, rel, { cpu: cg.host.cpuBase !== null, ...(cpus !== null ? { cpus } : {}) });
  pod.cpuGroup = pod.cgroup.cpuPath !== null;
  // A process moves itself into the container cgroup before exec (spawnInCgroup), already as
  // the pod's uid: the procs files must be writable by that uid, as in cgroup delegation.
  const asOther = pod.osUid !== process.getuid?.() || pod.osGid !== process.getgid?.();
  if (asOther && pod.cgroup.version === 'v1') for (const f of procsFiles(pod.cgroup)) chownSync(f, pod.osUid, pod.osGid);
}

/** Removes the pod's cgroup (pod<uid> with its container) in the memory and, where used, the cpu hierarchy. */
export async function removePodCgroups(cg: CgroupSetup, cgroup: Cgroup): Promise<void> {
  await removeTree(join(cg.host.memoryBase, dirname(cgroup.relPath)));
  if (cgroup.cpuPath) await removeTree(dirname(cgroup.cpuPath));
}

/** Removes the run's kubepods tree with whatever is left in it. */
export async function removeKubepods(cg: CgroupSetup, runId: string, driver: CgroupDriver): Promise<void> {
  const sub = join(runCgroupRel(runId), kubepodsDir(driver));
  await removeTree(join(cg.host.memoryBase, sub));
  if (cg.host.cpuBase) await removeTree(join(cg.host.cpuBase, sub));
}

/**
 * Only what the sandbox made: the run root goes when empty; another component of the same run
 * (an agent's cgroup) keeps it, and that component's owner removes it.
 */
export function removeRunRoot(cg: CgroupSetup, runId: string): void {
  for (const base of [cg.host.memoryBase, cg.host.cpuBase]) {
    if (!base) continue;
    removeIfEmpty(join(base, runCgroupRel(runId)));
    removeIfEmpty(join(base, 'attestorm'));
  }
}
