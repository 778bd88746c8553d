// Builds etcd and the Kubernetes components from their Go modules (through the Go module proxy)
// into the version-keyed cache, at nice 19. k8s.io/kubernetes replaces its staging modules with
// local paths, so a small wrapper module requires it and points each staging module at its
// published version; the version is set at link time so the API server reports it.
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PlatformError } from '../errors.js';
import { COLD_SECONDS, planLine, timedStep, type BuildStep } from './build-plan.js';
import { VERSIONS, binaries, type ClusterLayout } from './layout.js';
import { sh } from './sh.js';

/** k8s.io/kubernetes v1.34's staging modules (its go.mod's `=> ./staging/src/k8s.io/<name>` lines). */
export const STAGING_MODULES = [
  'api',
  'apiextensions-apiserver',
  'apimachinery',
  'apiserver',
  'cli-runtime',
  'client-go',
  'cloud-provider',
  'cluster-bootstrap',
  'code-generator',
  'component-base',
  'component-helpers',
  'controller-manager',
  'cri-api',
  'cri-client',
  'csi-translation-lib',
  'dynamic-resource-allocation',
  'endpointslice',
  'externaljwt',
  'kms',
  'kube-aggregator',
  'kube-controller-manager',
  'kube-proxy',
  'kube-scheduler',
  'kubectl',
  'kubelet',
  'metrics',
  'mount-utils',
  'pod-security-admission',
  'sample-apiserver',
  'sample-cli-plugin',
  'sample-controller',
] as const;

export const K8S_COMMANDS = ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubelet'] as const;
/** What a kind node image needs beside them: kubeadm and kubectl on the node, kube-proxy as an image. */
export const KIND_K8S_COMMANDS = ['kubeadm', 'kubectl', 'kube-proxy'] as const;
export type K8sCommand = (typeof K8S_COMMANDS)[number] | (typeof KIND_K8S_COMMANDS)[number];

export function k8sWrapperGoMod(k8s: string = VERSIONS.kubernetes, staging: string = VERSIONS.staging): string {
  const replaces = STAGING_MODULES.map((m) => `\tk8s.io/${m} => k8s.io/${m} ${staging}`).join('\n');
  return `module attestorm.local/k8s-build\n\ngo 1.24\n\nrequire k8s.io/kubernetes ${k8s}\n\nreplace (\n${replaces}\n)\n`;
}

export function etcdWrapperGoMod(etcd: string = VERSIONS.etcd): string {
  return `module attestorm.local/etcd-build\n\ngo 1.24\n\nrequire go.etcd.io/etcd/server/v3 ${etcd}\n`;
}

/** A file that imports the commands, so `go mod tidy` records every module they need. */
export function toolsGo(pkgs: readonly string[]): string {
  return `//go:build tools\n\npackage tools\n\nimport (\n${pkgs.map((p) => `\t_ "${p}"`).join('\n')}\n)\n`;
}

/** -ldflags that make the components report `version` instead of v0.0.0-master. */
export function k8sLdflags(version: string = VERSIONS.kubernetes): string {
  const m = /^v(\d+)\.(\d+)\./.exec(version);
  if (!m) throw new PlatformError(`Kubernetes version must look like v1.34.4, got ${version}`);
  const parts = ['-s', '-w'];
  for (const pkg of ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version']) {
    parts.push(
      `-X ${pkg}.gitVersion=${version}`,
      `-X ${pkg}.gitMajor=${m[1]}`,
      `-X ${pkg}.gitMinor=${m[2]}`,
      `-X ${pkg}.gitTreeState=clean`,
      `-X ${pkg}.buildDate=1970-01-01T00:00:00Z`,
    );
  }
  return parts.join(' ');
}

/** Missing binaries in the cache (empty when a start needs no build). */
export function missingBinaries(l: ClusterLayout): string[] {
  return Object.values(binaries(l)).filter((b) => !existsSync(b));
}

export function goEnv(): NodeJS.ProcessEnv {
  // GOTOOLCHAIN=local: never fetch another toolchain behind the user's back; -mod=mod lets tidy write go.sum.
  return { ...process.env, CGO_ENABLED: '0', GOTOOLCHAIN: 'local', GOFLAGS: '-mod=mod' };
}

async function goBuild(srcDir: string, pkg: string, out: string, ldflags: string): Promise<void> {
  const tmp = `${out}.partial`;
  await sh('nice', ['-n', '19', 'go', 'build', '-ldflags', ldflags, '-o', tmp, pkg], { cwd: srcDir, env: goEnv() });
  renameSync(tmp, out); // only a finished binary counts as cached
}

async function prepareModule(dir: string, goMod: string, pkgs: readonly string[]): Promise<string> {
  const src = join(dir, 'src');
  mkdirSync(src, { recursive: true });
  mkdirSync(join(dir, 'bin'), { recursive: true });
  writeFileSync(join(src, 'go.mod'), goMod);
  writeFileSync(join(src, 'tools.go'), toolsGo(pkgs));
  rmSync(join(src, 'go.sum'), { force: true });
  await sh('nice', ['-n', '19', 'go', 'mod', 'tidy'], { cwd: src, env: goEnv() });
  return src;
}

/** The build step for etcd when the cache lacks it, else none. */
export function etcdSteps(l: ClusterLayout): BuildStep[] {
  return existsSync(binaries(l).etcd) ? [] : [{ what: `etcd ${VERSIONS.etcd} from go.etcd.io/etcd/server/v3`, seconds: COLD_SECONDS.etcd }];
}

/** etcd into the cache when it is missing; returns what it built. */
export async function buildEtcd(l: ClusterLayout, log: (s: string) => void): Promise<string[]> {
  const [step] = etcdSteps(l);
  if (!step) return [];
  const etcd = binaries(l).etcd;
  await timedStep(log, step, async () => {
    const src = await prepareModule(l.etcdDir, etcdWrapperGoMod(), ['go.etcd.io/etcd/server/v3']);
    await goBuild(src, 'go.etcd.io/etcd/server/v3', etcd, '-s -w');
  });
  return [etcd];
}

/** Builds whatever is missing from the cache, saying first what and how long; returns what it built. */
export async function buildMissing(l: ClusterLayout, log: (s: string) => void): Promise<string[]> {
  const plan = planLine(`the local cluster's etcd and Kubernetes binaries (${l.cacheDir})`, [...etcdSteps(l), ...kubernetesSteps(l, K8S_COMMANDS)]);
  if (plan) log(plan);
  return [...(await buildEtcd(l, log)), ...(await buildKubernetes(l, K8S_COMMANDS, log))];
}

function k8sStep(c: K8sCommand): BuildStep {
  return { what: `Kubernetes ${VERSIONS.kubernetes} ${c}`, seconds: COLD_SECONDS[c] };
}

/** The build steps for those of `commands` the cache lacks: the module download, then each command. */
export function kubernetesSteps(l: ClusterLayout, commands: readonly K8sCommand[]): BuildStep[] {
  const missing = commands.filter((c) => !existsSync(join(l.k8sDir, 'bin', c)));
  if (!missing.length) return [];
  return [
    { what: `the Kubernetes ${VERSIONS.kubernetes} modules (k8s.io/kubernetes and its staging modules)`, seconds: COLD_SECONDS.kubernetesModules },
    ...missing.map(k8sStep),
  ];
}

/** Builds those of `commands` the cache lacks (the module's tools file names every command either user needs). */
export async function buildKubernetes(l: ClusterLayout, commands: readonly K8sCommand[], log: (s: string) => void): Promise<string[]> {
  const [modules, ...builds] = kubernetesSteps(l, commands);
  if (!modules) return [];
  const pkgs = [...K8S_COMMANDS, ...KIND_K8S_COMMANDS].map((c) => `k8s.io/kubernetes/cmd/${c}`);
  const src = await timedStep(log, modules, () => prepareModule(l.k8sDir, k8sWrapperGoMod(), pkgs));
  const missing = commands.filter((c) => !existsSync(join(l.k8sDir, 'bin', c)));
  for (const [i, c] of missing.entries())
    await timedStep(log, builds[i]!, () => goBuild(src, `k8s.io/kubernetes/cmd/${c}`, join(l.k8sDir, 'bin', c), k8sLdflags()));
  return missing;
}

/** Where `go` keeps k8s.io/kubernetes's source (pause.c lives there), downloaded when the module cache lacks it. */
export async function kubernetesModuleDir(): Promise<string> {
  const r = await sh('go', ['mod', 'download', '-json', `k8s.io/kubernetes@${VERSIONS.kubernetes}`], { env: goEnv() });
  const dir = (JSON.parse(r.stdout) as { Dir?: string }).Dir;
  if (!dir) throw new PlatformError(`go mod download k8s.io/kubernetes@${VERSIONS.kubernetes} named no folder: ${r.stdout.trim()}`);
  return dir;
}
