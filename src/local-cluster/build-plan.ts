// What a cached build will do before it starts and how long each part takes, so a command that
// must build on a fresh machine (`cluster up`, `kind up`, `npm run test:kind`) says what the wait
// is for and how long it will be, then one line per step as it starts and as it ends.

/** One part a command is about to build, with the seconds it took on a cold cache. */
export interface BuildStep {
  what: string;
  seconds: number;
}

/**
 * Seconds each part takes on a cold cache (empty Go module and build caches) on 2 idle cores at
 * nice 19 (docs/kubernetes.md, "Measured"); kubeadm, kubectl, kube-proxy and CoreDNS from a cold
 * build on a busy machine, halved. These only set expectations: a busy machine takes up to twice as long.
 */
export const COLD_SECONDS = {
  etcd: 60,
  /** `go mod tidy` of the Kubernetes wrapper module: the module download. */
  kubernetesModules: 30,
  'kube-apiserver': 360,
  'kube-controller-manager': 110,
  'kube-scheduler': 10,
  kubelet: 25,
  kubeadm: 40,
  kubectl: 50,
  'kube-proxy': 20,
  coredns: 170,
  kind: 60,
  pause: 10,
  /** debootstrap of the kind node's base with its packages, and kind's files laid over it. */
  kindBase: 120,
  /** The node's images packed and imported, the node committed and saved. */
  nodeImage: 120,
  /** The Node base (debootstrap minbase, node and npm from the npm registry) and the project's image on it. */
  projectImage: 150,
} as const;

/** "about 6 min", "about 40 s". */
export function roughly(seconds: number): string {
  if (seconds < 90) return `about ${Math.max(10, Math.round(seconds / 10) * 10)} s`;
  return `about ${Math.round(seconds / 60)} min`;
}

/**
 * One line naming every step and the time they take together, or null when nothing is missing:
 * "<purpose> is not cached: building it once here, about 14 min on 2 idle cores (up to twice that on a busy
 * machine): etcd v3.6.16 (about 1 min); …".
 */
export function planLine(purpose: string, steps: readonly BuildStep[]): string | null {
  if (!steps.length) return null;
  const total = steps.reduce((n, s) => n + s.seconds, 0);
  const parts = steps.map((s, i) => `${i + 1}. ${s.what} (${roughly(s.seconds)})`).join('; ');
  return `${purpose} is not cached: building it once here, ${roughly(total)} on 2 idle cores (up to twice that on a busy machine): ${parts}`;
}

/** Runs one step between a line that says what it builds and how long it takes and one with the time it took. */
export async function timedStep<T>(log: (s: string) => void, step: BuildStep, fn: () => Promise<T>): Promise<T> {
  log(`building ${step.what} (${roughly(step.seconds)} cold)`);
  const t0 = Date.now();
  const out = await fn();
  log(`built ${step.what} in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  return out;
}
