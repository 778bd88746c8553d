// The agent's memory cgroup in a kind node, read from the host. A kind node is a container with a
// private cgroup namespace, so its kubelet's paths (`/kubelet.slice/...`, systemd driver) are
// relative to the node container's own cgroup: found from the node container's init PID on the
// host. The container scope changes on every restart (re-resolved by container ID); the pod slice
// is continuous across restarts and is the series kept.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PlatformError } from '../errors.js';
import { readCgroupMemory, type CgroupFlavour, type CgroupMemory } from '../kube/index.js';

export interface NodeCgroupRoot {
  version: CgroupFlavour;
  /** Host directory of the node container's memory cgroup. */
  dir: string;
}

/**
 * The node container's memory cgroup directory on the host, from /proc/<pid>/cgroup of its init
 * process: the unified line (v2) or the memory controller's line (v1 / hybrid).
 */
export function nodeCgroupRoot(pid: number, opts: { procRoot?: string; cgroupRoot?: string } = {}): NodeCgroupRoot {
  const procRoot = opts.procRoot ?? '/proc';
  const cgroupRoot = opts.cgroupRoot ?? '/sys/fs/cgroup';
  let text: string;
  try {
    text = readFileSync(join(procRoot, String(pid), 'cgroup'), 'utf8');
  } catch (err) {
    throw new PlatformError(`kind cgroup: cannot read ${procRoot}/${pid}/cgroup of the node container (${(err as Error).message})`);
  }
  const lines = text
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split(':'));
  // On cgroup v2 the node's own processes cannot sit in its root once it has children: its init is
  // moved into a child (systemd's init.scope, or /init). The node's root is the nearest ancestor
  // that holds kubelet.slice; before the kubelet has made one, the init cgroup's parent if it is one
  // of those children.
  const nodeRoot = (p: string, base: string) => {
    for (let rel = p, i = 0; i < 3 && rel !== '/' && rel !== ''; i++, rel = dirname(rel)) {
      if (existsSync(join(base, rel, 'kubelet.slice'))) return rel;
    }
    return p.replace(/\/(init\.scope|init)$/, '');
  };
  const memory = lines.find((l) => l[1]?.split(',').includes('memory'));
  if (memory && existsSync(join(cgroupRoot, 'memory')))
    return { version: 'v1', dir: join(cgroupRoot, 'memory', nodeRoot(memory.slice(2).join(':'), join(cgroupRoot, 'memory'))) };
  const unified = lines.find((l) => l[0] === '0' && l[1] === '');
  if (unified) return { version: 'v2', dir: join(cgroupRoot, nodeRoot(unified.slice(2).join(':'), cgroupRoot)) };
  throw new PlatformError(`kind cgroup: ${procRoot}/${pid}/cgroup names neither a memory controller nor the unified hierarchy`);
}

const QOS = ['', 'burstable', 'besteffort'] as const;

/** Candidate pod slice paths under the kubelet's cgroupRoot /kubelet (systemd driver), Guaranteed first. */
export function podSliceCandidates(podUid: string): string[] {
  const uid = podUid.replace(/-/g, '_');
  const base = 'kubelet.slice/kubelet-kubepods.slice';
  return QOS.map((q) => (q ? `${base}/kubelet-kubepods-${q}.slice/kubelet-kubepods-${q}-pod${uid}.slice` : `${base}/kubelet-kubepods-pod${uid}.slice`));
}

/** containerd://<id> → cri-containerd-<id>.scope */
export function containerScopeName(containerID: string): string {
  const id = containerID.replace(/^[a-z]+:\/\//, '');
  if (!/^[0-9a-f]{64}$/.test(id)) throw new PlatformError(`kind cgroup: container ID must be <runtime>://<64 hex>, got "${containerID}"`);
  return `cri-containerd-${id}.scope`;
}

/** The agent pod's cgroups in a kind node: the pod slice (found once) and the current container scope. */
export class KindAgentCgroup {
  readonly root: NodeCgroupRoot;
  readonly podUid: string;
  #podSlice: string | null = null;
  #scope: string | null = null;
  #lastOomKills = 0;

  constructor(root: NodeCgroupRoot, podUid: string) {
    this.root = root;
    this.podUid = podUid;
  }

  /** The pod slice directory; null until the kubelet has created it. */
  podSlice(): string | null {
    if (this.#podSlice) return this.#podSlice;
    for (const rel of podSliceCandidates(this.podUid)) {
      const dir = join(this.root.dir, rel);
      if (existsSync(dir)) return (this.#podSlice = dir);
    }
    return null;
  }

  /** Re-resolves the container scope: every restart makes a new one. */
  setContainer(containerID: string): string | null {
    const slice = this.podSlice();
    this.#scope = slice ? join(slice, containerScopeName(containerID)) : null;
    return this.#scope;
  }

  get scope(): string | null {
    return this.#scope;
  }

  readPod(): CgroupMemory | null {
    const slice = this.podSlice();
    return slice ? readCgroupMemory(slice, this.root.version) : null;
  }

  readContainer(): CgroupMemory | null {
    return this.#scope ? readCgroupMemory(this.#scope, this.root.version) : null;
  }

  /** OOM kills seen in the pod (v2: the slice counts its subtree; v1: the larger of slice and scope). */
  oomKills(): number {
    return Math.max(this.readPod()?.oomKills ?? 0, this.readContainer()?.oomKills ?? 0);
  }

  /** Whether the oom_kill counter rose since the last call (for Error/137 classification). */
  oomKillRose(): boolean | null {
    if (!this.podSlice()) return null;
    const now = this.oomKills();
    const rose = now > this.#lastOomKills;
    this.#lastOomKills = now;
    return rose;
  }
}
