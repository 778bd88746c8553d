// Pod UID and container ID from the text of /proc/<pid>/cgroup, shared by the k8s attestor, the
// pod-uid limiter key and `attestorm debug cgroup`, so all three agree on who is in which pod.

export interface CgroupIdentity {
  /** Pod UID with dashes (systemd slices spell it with underscores), or null. */
  podUID: string | null;
  /** The container runtime's 64-hex container ID, or null when the process is not in a container. */
  containerID: string | null;
}

// A segment naming a container: the bare ID (cgroupfs driver) or a systemd scope of a runtime,
// e.g. "cri-containerd-<id>.scope", "docker-<id>.scope", "crio-<id>.scope".
const CONTAINER_SEGMENT = /^(?:[a-z][a-z0-9-]*-)?([0-9a-f]{64})(?:\.scope)?$/;

// A segment naming a pod: "pod<uuid>" (cgroupfs) or "kubepods-<qos>-pod<uuid_with_underscores>.slice"
// (systemd). Static (mirror) pods have a 32-hex config hash as UID, without dashes.
const POD_SEGMENT = /(?:^|-)pod([0-9a-f]{8}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{12}|[0-9a-f]{32})(?:\.slice)?$/;

/** Parses one cgroup path ("/kubepods/besteffort/pod<uid>/<cid>"). */
export function parseCgroupPath(path: string): CgroupIdentity {
  const segments = path.split('/');
  // The container is the *last* 64-hex segment: kind nests a whole node under /docker/<node id>/,
  // and a runtime may add sub-cgroups below the container's own.
  let containerAt = -1;
  let containerID: string | null = null;
  for (let i = segments.length - 1; i >= 0; i--) {
    const m = CONTAINER_SEGMENT.exec(segments[i]!);
    if (m) {
      containerAt = i;
      containerID = m[1]!;
      break;
    }
  }
  if (containerID === null) return { podUID: null, containerID: null };
  // Only segments above the container can name its pod; arbitrary prefixes (a harness's own
  // cgroup, kind's /docker/<id>) are skipped because they do not start with "pod".
  for (let i = containerAt - 1; i >= 0; i--) {
    const m = POD_SEGMENT.exec(segments[i]!);
    if (m) return { podUID: m[1]!.replaceAll('_', '-'), containerID };
  }
  // In a container but no pod segment: cri-o setups and cgroup namespaces can hide the pod, and a
  // plain docker container (/docker/<id>) has none. The container ID is still the truth, so it is
  // returned and the k8s attestor looks the container up across all pods.
  return { podUID: null, containerID };
}

/**
 * Parses /proc/<pid>/cgroup: cgroup v1 ("4:memory:/kubepods/...", one line per hierarchy) and v2
 * ("0::/kubepods/..."). Lines may disagree (a harness may move a process in only one hierarchy):
 * the first line naming both a pod and a container wins, else the first naming a container.
 * No container anywhere means "not in a pod": both fields null.
 */
export function parseCgroup(text: string): CgroupIdentity {
  let containerOnly: CgroupIdentity | null = null;
  for (const line of text.split('\n')) {
    // hierarchy-ID:controller-list:path — the path may itself contain ':' so split twice only.
    const first = line.indexOf(':');
    if (first < 0) continue;
    const second = line.indexOf(':', first + 1);
    if (second < 0) continue;
    const path = line.slice(second + 1).trim();
    if (!path) continue;
    const id = parseCgroupPath(path);
    if (id.podUID !== null) return id;
    if (id.containerID !== null && containerOnly === null) containerOnly = id;
  }
  return containerOnly ?? { podUID: null, containerID: null };
}
