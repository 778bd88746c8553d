// What `cluster up` checks before it starts anything: each problem names the missing piece and
// what to do. The checks read the host through a probe, so they are unit-tested with fake hosts.
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { PORTS } from './layout.js';

export interface HostProbe {
  platform: NodeJS.Platform;
  uid: number;
  /** A tool on PATH. */
  has(tool: string): boolean;
  exists(path: string): boolean;
  listening: Set<number>;
  /** `go version` output, or null when go is not on PATH. */
  goVersion: string | null;
}

export interface CheckNeeds {
  /** Binaries are missing from the cache: Go must build them. */
  build: boolean;
  /** Image archives are missing: their tools are needed. */
  pauseImage: boolean;
  baseImage: boolean;
  projectImage: boolean;
}

export const CNI_DIR = '/usr/lib/cni';
const RUNTIME_INSTALL = 'apt-get install containerd runc containernetworking-plugins';

export function hostProblems(p: HostProbe, needs: CheckNeeds): string[] {
  if (p.platform !== 'linux')
    return [
      `attestorm cluster runs Kubernetes' components directly on a Linux host; this is ${p.platform}. Use kind (attestorm kind up) or --context with a cluster elsewhere`,
    ];
  const problems: string[] = [];
  if (p.uid !== 0)
    problems.push(
      `attestorm cluster up must run as root (it starts containerd and the kubelet, which create cgroups, mounts and network interfaces); uid is ${p.uid}: run it with sudo`,
    );
  for (const tool of ['containerd', 'runc', 'ctr']) if (!p.has(tool)) problems.push(`\`${tool}\` is not on PATH: ${RUNTIME_INSTALL}`);
  for (const plugin of ['bridge', 'host-local', 'loopback'])
    if (!p.exists(join(CNI_DIR, plugin))) problems.push(`the CNI plugin ${join(CNI_DIR, plugin)} is missing: ${RUNTIME_INSTALL}`);
  for (const tool of ['ip', 'iptables', 'iptables-save'])
    if (!p.has(tool)) problems.push(`\`${tool}\` is not on PATH (the kubelet and teardown use it): apt-get install ${tool === 'ip' ? 'iproute2' : 'iptables'}`);
  if (!p.exists('/sys/fs/cgroup/memory') && !p.exists('/sys/fs/cgroup/cgroup.controllers'))
    problems.push('no memory cgroup at /sys/fs/cgroup/memory (v1) or /sys/fs/cgroup (v2): the kubelet needs one');
  if (needs.build || needs.pauseImage) {
    const v = p.goVersion === null ? null : /go(\d+)\.(\d+)/.exec(p.goVersion);
    if (!v)
      problems.push(
        "`go` is not on PATH: building etcd and Kubernetes (and finding pause.c) needs Go 1.24 or newer (https://go.dev/dl; Debian 12's golang is too old), or a cache that already holds them (ATTESTORM_CLUSTER_CACHE)",
      );
    else if (Number(v[1]) < 1 || (Number(v[1]) === 1 && Number(v[2]) < 24))
      problems.push(`Go ${v[1]}.${v[2]} is too old to build Kubernetes v1.34 (needs 1.24 or newer): ${p.goVersion}`);
  }
  if (needs.pauseImage && !p.has('gcc')) problems.push('`gcc` is not on PATH (the pause image is pause.c linked statically): apt-get install gcc libc6-dev');
  const imageTools = [
    ...(needs.pauseImage || needs.baseImage ? ['umoci'] : []),
    ...(needs.baseImage ? ['debootstrap', 'npm'] : []),
    ...(needs.baseImage || needs.projectImage ? ['buildah', 'skopeo'] : []),
  ];
  for (const tool of new Set(imageTools))
    if (!p.has(tool)) problems.push(`\`${tool}\` is not on PATH (images are made locally, no registry): apt-get install ${tool}`);
  for (const [what, port] of Object.entries(PORTS)) {
    if (p.listening.has(port))
      problems.push(
        `port ${port} (${what}) is in use: stop what listens on it (ss -ltnp 'sport = :${port}'), or \`attestorm cluster down\` if it is an earlier cluster`,
      );
  }
  return problems;
}

export function onPath(tool: string, path = process.env.PATH ?? ''): boolean {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, tool), constants.X_OK);
      return true;
    } catch {
      // next
    }
  }
  return false;
}
