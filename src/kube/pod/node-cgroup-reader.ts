// Inside the memory-sampler pod: the agent container's memory cgroup on its node, found under the
// node's /sys/fs/cgroup (a read-only hostPath) by pod UID and container ID whatever the cgroup
// driver names them (systemd `…-pod<uid_>.slice/cri-containerd-<id>.scope`, cgroupfs
// `pod<uid>/<id>`, cri-o `crio-<id>.scope`, kind's nested `kubelet.slice/…`), and read as v2
// memory.current/memory.peak or v1 usage/max_usage. The container's cgroup is new after every
// restart: it is re-resolved when the container ID changes or the directory is gone.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { readCgroupMemory, type CgroupFlavour, type CgroupMemory } from '../cgroup-memory.js';
import { subdirectories } from '../../util/fs.js';

/** Deep enough for kind's node-in-a-container layout (…/kubelet.slice/kubelet-kubepods.slice/<qos>/<pod>). */
const MAX_DEPTH = 7;

/** v2 when the root has cgroup.controllers; v1 when it has a memory hierarchy; null otherwise. */
export function cgroupFlavourAt(root: string): CgroupFlavour | null {
  if (existsSync(join(root, 'cgroup.controllers'))) return 'v2';
  if (existsSync(join(root, 'memory'))) return 'v1';
  return null;
}

/** The pod's cgroup directory under `base` (breadth first, bounded depth); null when none. */
export function findPodDir(base: string, podUid: string): string | null {
  const names = [`pod${podUid}`, `pod${podUid.replace(/-/g, '_')}`];
  let level = [base];
  for (let depth = 0; depth < MAX_DEPTH && level.length; depth++) {
    const next: string[] = [];
    for (const dir of level) {
      for (const c of subdirectories(dir)) {
        const p = join(dir, c);
        if (names.some((n) => c === n || c.endsWith(`-${n}.slice`))) return p;
        next.push(p);
      }
    }
    level = next;
  }
  return null;
}

/** The container's directory in its pod's: the child whose name carries the 64-hex container ID. */
export function findContainerDir(podDir: string, containerID: string): string | null {
  const id = containerID.replace(/^[a-z0-9-]+:\/\//, '');
  if (!/^[0-9a-f]{64}$/.test(id)) return null;
  const c = subdirectories(podDir).find((n) => n === id || n.endsWith(`-${id}.scope`));
  return c ? join(podDir, c) : null;
}

export interface AgentMemoryReading extends CgroupMemory {
  /** The container cgroup read (for the sampler's own log). */
  dir: string;
}

export class NodeCgroupReader {
  readonly root: string;
  readonly flavour: CgroupFlavour;
  #podUid: string | null = null;
  #containerID: string | null = null;
  #dir: string | null = null;

  /** `root`: where the node's /sys/fs/cgroup is mounted. */
  constructor(root: string) {
    const flavour = cgroupFlavourAt(root);
    if (!flavour) throw new Error(`${root} is neither a cgroup v2 root (cgroup.controllers) nor a v1 one (memory/)`);
    this.root = root;
    this.flavour = flavour;
  }

  get target(): { podUid: string; containerID: string } | null {
    return this.#podUid && this.#containerID ? { podUid: this.#podUid, containerID: this.#containerID } : null;
  }

  /** The agent container to follow; a new container ID (a restart) is resolved afresh. */
  setTarget(podUid: string, containerID: string): void {
    if (podUid === this.#podUid && containerID === this.#containerID) return;
    this.#podUid = podUid;
    this.#containerID = containerID;
    this.#dir = null;
  }

  #resolve(): string | null {
    if (this.#dir && existsSync(this.#dir)) return this.#dir;
    if (!this.#podUid || !this.#containerID) return null;
    const base = this.flavour === 'v1' ? join(this.root, 'memory') : this.root;
    const pod = findPodDir(base, this.#podUid);
    this.#dir = pod ? findContainerDir(pod, this.#containerID) : null;
    return this.#dir;
  }

  /** One reading of the agent container; null when it cannot be found (no target yet, or between a death and its restart). */
  read(): AgentMemoryReading | null {
    const dir = this.#resolve();
    if (!dir) return null;
    const m = readCgroupMemory(dir, this.flavour);
    if (!m) {
      this.#dir = null;
      return null;
    }
    return { ...m, dir };
  }
}
