// `kind` and the container engine, shelled out to: creating and deleting the cluster, and finding
// the node container's init PID on this host (its cgroup holds the agent's). Neither may be
// installed: that is a PlatformError naming the missing tool and what to do.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlatformError } from '../../errors.js';
import { nodeCgroupRoot, type NodeCgroupRoot } from './kind-cgroup.js';

export interface ToolResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a tool; a tool that is not on PATH is a PlatformError with `hint`. Output is passed through when `inherit`. */
export function runTool(tool: string, args: string[], opts: { hint: string; inherit?: boolean; env?: NodeJS.ProcessEnv } = { hint: '' }): Promise<ToolResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(tool, args, { stdio: ['ignore', opts.inherit ? 'inherit' : 'pipe', opts.inherit ? 'inherit' : 'pipe'], env: opts.env ?? process.env });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d) => (stdout += d));
    child.stderr?.on('data', (d) => (stderr += d));
    child.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') reject(new PlatformError(`\`${tool}\` is not on PATH: ${opts.hint}`));
      else reject(new PlatformError(`${tool} ${args.join(' ')} could not start: ${err.message}`, { cause: err }));
    });
    child.once('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

const KIND_HINT =
  'install kind (https://kind.sigs.k8s.io/docs/user/quick-start/#installation) and a container engine, or use --context with an existing cluster';

/** The cluster config kind mode needs: one node (the agent and the storm share it: hostPath socket). */
export function kindConfig(name: string, nodeImage?: string): string {
  return `kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
name: ${name}
nodes:
  - role: control-plane
${nodeImage ? `    image: ${nodeImage}\n` : ''}`;
}

export async function kindUp(name: string, opts: { nodeImage?: string; wait?: string } = {}): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'attestorm-kind-'));
  try {
    const file = join(dir, 'kind.yaml');
    writeFileSync(file, kindConfig(name, opts.nodeImage));
    const r = await runTool('kind', ['create', 'cluster', '--name', name, '--config', file, '--wait', opts.wait ?? '120s'], { hint: KIND_HINT, inherit: true });
    if (r.code !== 0) throw new PlatformError(`kind create cluster --name ${name} failed (exit ${r.code})`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function kindDown(name: string): Promise<void> {
  const r = await runTool('kind', ['delete', 'cluster', '--name', name], { hint: KIND_HINT, inherit: true });
  if (r.code !== 0) throw new PlatformError(`kind delete cluster --name ${name} failed (exit ${r.code})`);
}

/** The kind node container's cgroup on this host, via its init PID (`docker inspect`, or podman). */
export async function kindNodeCgroup(name: string, engine = process.env.KIND_EXPERIMENTAL_PROVIDER || 'docker'): Promise<NodeCgroupRoot> {
  const node = `${name}-control-plane`;
  const r = await runTool(engine, ['inspect', '-f', '{{.State.Pid}}', node], {
    hint: `kind mode reads the agent's memory through the node container's cgroup and needs ${engine} to find it`,
  });
  const pid = Number(r.stdout.trim());
  if (r.code !== 0 || !Number.isInteger(pid) || pid <= 0)
    throw new PlatformError(`${engine} inspect ${node}: no running node container (${r.stderr.trim() || r.stdout.trim()})`);
  return nodeCgroupRoot(pid);
}
