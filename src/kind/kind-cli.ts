// `kind` and the container engine, shelled out to: creating and deleting the cluster, and finding
// the node container's init PID on this host (its cgroup holds the agent's). Neither may be
// installed: that is a PlatformError naming the missing tool and what to do.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlatformError } from '../errors.js';
import { nodeCgroupRoot, type NodeCgroupRoot } from './kind-cgroup.js';

export interface ToolResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a tool; a tool that is not on PATH is a PlatformError with `hint`. Output is passed through when `inherit`. */
export function runTool(
  tool: string,
  args: string[],
  opts: { hint: string; inherit?: boolean; env?: NodeJS.ProcessEnv; timeoutMs?: number } = { hint: '' },
): Promise<ToolResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(tool, args, {
      stdio: ['ignore', opts.inherit ? 'inherit' : 'pipe', opts.inherit ? 'inherit' : 'pipe'],
      env: opts.env ?? process.env,
      // A tool that hangs (an engine shutting down) is killed: the caller reads a failure, not a wait.
      ...(opts.timeoutMs ? { timeout: opts.timeoutMs, killSignal: 'SIGKILL' as const } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d) => (stdout += d));
    child.stderr?.on('data', (d) => (stderr += d));
    child.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') reject(new PlatformError(`\`${tool}\` is not on PATH: ${opts.hint}`));
      else reject(new PlatformError(`${tool} ${args.join(' ')} could not start: ${err.message}`, { cause: err }));
    });
    child.once('close', (code, signal) =>
      resolve({ code: code ?? 1, stdout, stderr: signal && opts.timeoutMs ? `${stderr}no answer within ${opts.timeoutMs / 1000} s` : stderr }),
    );
  });
}

const KIND_HINT =
  'install kind (https://kind.sigs.k8s.io/docs/user/quick-start/#installation) and a container engine, or use --context with an existing cluster';

export interface KindUpOptions {
  nodeImage?: string;
  /** Nodes in all: a control plane, the rest workers (default 1). */
  nodes?: number;
  wait?: string;
  /** The kind binary (default: `kind` on PATH). */
  kind?: string;
  env?: NodeJS.ProcessEnv;
}

/**
 * The kubelet setting every kind cluster of attestorm gets: Kubernetes 1.35 and later refuse to start
 * on a cgroup v1 host unless told otherwise, and some self-hosted runners still are v1. The
 * workflow's kind config (`.github/kind-cluster.yaml`) carries the same patch.
 */
const KIND_KUBELET_PATCH = `kubeadmConfigPatches:
  - |
    kind: KubeletConfiguration
    failCgroupV1: false
`;

/** The cluster config: a control plane and `nodes - 1` workers, all of one node image. */
export function kindConfig(name: string, nodeImage?: string, nodes = 1): string {
  const image = nodeImage ? `    image: ${nodeImage}\n` : '';
  const workers = Array.from({ length: nodes - 1 }, () => `  - role: worker\n${image}`).join('');
  return `kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
name: ${name}
${KIND_KUBELET_PATCH}nodes:
  - role: control-plane
${image}${workers}`;
}

export async function kindUp(name: string, opts: KindUpOptions = {}): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'attestorm-kind-'));
  try {
    const file = join(dir, 'kind.yaml');
    writeFileSync(file, kindConfig(name, opts.nodeImage, opts.nodes));
    const kind = opts.kind ?? 'kind';
    const r = await runTool(kind, ['create', 'cluster', '--name', name, '--config', file, '--wait', opts.wait ?? '120s'], {
      hint: KIND_HINT,
      inherit: true,
      ...(opts.env ? { env: opts.env } : {}),
    });
    if (r.code !== 0) throw new PlatformError(`kind create cluster --name ${name} failed (exit ${r.code})`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function kindDown(name: string, opts: Pick<KindUpOptions, 'kind' | 'env'> = {}): Promise<void> {
  const r = await runTool(opts.kind ?? 'kind', ['delete', 'cluster', '--name', name], {
    hint: KIND_HINT,
    inherit: true,
    ...(opts.env ? { env: opts.env } : {}),
  });
  if (r.code !== 0) throw new PlatformError(`kind delete cluster --name ${name} failed (exit ${r.code})`);
}

export interface KindNode {
  cgroup: NodeCgroupRoot;
  /** The node container's image, as the engine names it. */
  image: string;
}

/**
 * A kind node container's cgroup on this host, via its init PID, and its image (`docker inspect`,
 * or podman): the control plane's, or `node` (kind names a node's container after the node).
 */
export async function kindNode(name: string, engine = process.env.KIND_EXPERIMENTAL_PROVIDER || 'docker', node = `${name}-control-plane`): Promise<KindNode> {
  const r = await runTool(engine, ['inspect', '-f', '{{.State.Pid}} {{.Config.Image}}', node], {
    hint: `kind mode reads the agent's memory through the node container's cgroup and needs ${engine} to find it`,
  });
  const [pidText = '', image = ''] = r.stdout.trim().split(' ');
  const pid = Number(pidText);
  if (r.code !== 0 || !Number.isInteger(pid) || pid <= 0)
    throw new PlatformError(`${engine} inspect ${node}: no running node container (${r.stderr.trim() || r.stdout.trim()})`);
  return { cgroup: nodeCgroupRoot(pid), image };
}

/** A kind node container as its engine sees it now: running (since when), or why not. */
export type NodeContainerState = { running: true; startedAt: string } | { running: false; why: string };

/**
 * Whether the node container `node` still runs: gone (`docker rm -f`), stopped, or an engine that
 * does not answer (restarting) each say so in `why`. A changed `startedAt` is a node that restarted.
 */
export async function kindNodeContainer(node: string, env: NodeJS.ProcessEnv = process.env): Promise<NodeContainerState> {
  const engine = env.KIND_EXPERIMENTAL_PROVIDER || 'docker';
  const r = await runTool(engine, ['inspect', '-f', '{{.State.Status}} {{.State.StartedAt}}', node], {
    hint: `kind mode checks its node containers with ${engine}`,
    env,
    timeoutMs: 10_000,
  });
  const [status = '', startedAt = ''] = r.stdout.trim().split(' ');
  if (r.code === 0) return status === 'running' ? { running: true, startedAt } : { running: false, why: `its container ${node} is ${status}` };
  const said = (r.stderr.trim() || r.stdout.trim()).split('\n').pop() ?? '';
  if (/no such (object|container)/i.test(said)) return { running: false, why: `its container ${node} no longer exists in the engine` };
  return { running: false, why: `the container engine does not answer (${engine} inspect ${node}: ${said || `exit ${r.code}`})` };
}
