// `cluster status`: which daemons of the recorded cluster still run, what the API server reports
// (version, node readiness), where the kubeconfig is, and which images the node's containerd holds.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { httpsGet } from './daemons.js';
import { CONTEXT_NAME, PORTS, clusterLayout, type ClusterLayout } from './layout.js';
import { sh } from './sh.js';
import { isOurs, readState } from './state.js';
import { describeLeftovers, findLeftovers } from './teardown.js';

export interface ClusterStatus {
  running: boolean;
  /** `up` finished (node Ready); false: it failed or was killed part-way. */
  ready: boolean;
  startedAt: string | null;
  daemons: Array<{ name: string; pid: number; running: boolean }>;
  serverVersion: string | null;
  node: { name: string; ready: boolean; kubeletVersion: string | null } | null;
  kubeconfig: string | null;
  context: string;
  images: string[];
  /** Leftovers of a cluster that is not running (what `down` would remove). */
  leftovers: string[];
}

export async function clusterStatus(l: ClusterLayout = clusterLayout()): Promise<ClusterStatus> {
  const state = readState(l.stateFile);
  const daemons = (state?.daemons ?? []).map((d) => ({ name: d.name, pid: d.pid, running: isOurs(d) }));
  const out: ClusterStatus = {
    running: daemons.length > 0 && daemons.every((d) => d.running),
    ready: state?.ready === true,
    startedAt: state?.startedAt ?? null,
    daemons,
    serverVersion: null,
    node: null,
    kubeconfig: state && existsSync(state.kubeconfig) ? state.kubeconfig : null,
    context: CONTEXT_NAME,
    images: [],
    leftovers: [],
  };
  if (!daemons.some((d) => d.running)) {
    out.leftovers = describeLeftovers(await findLeftovers(l, state));
    return out;
  }
  const pki = (f: string) => readFileSync(join(l.certsDir, f), 'utf8');
  try {
    const tls = { ca: pki('ca.crt'), cert: pki('admin.crt'), key: pki('admin.key') };
    const v = await httpsGet(`https://127.0.0.1:${PORTS.apiServer}/version`, tls);
    if (v.status === 200) out.serverVersion = (JSON.parse(v.body) as { gitVersion: string }).gitVersion;
    const n = await httpsGet(`https://127.0.0.1:${PORTS.apiServer}/api/v1/nodes/${state!.nodeName}`, tls);
    if (n.status === 200) {
      const node = JSON.parse(n.body) as { status?: { conditions?: Array<{ type: string; status: string }>; nodeInfo?: { kubeletVersion?: string } } };
      out.node = {
        name: state!.nodeName,
        ready: node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
        kubeletVersion: node.status?.nodeInfo?.kubeletVersion ?? null,
      };
    }
  } catch {
    // The API server is not answering: reported as no version.
  }
  const ls = await sh('ctr', ['--address', l.containerdSocket, '-n', 'k8s.io', 'images', 'ls', '-q'], { allowFail: true }).catch(() => null);
  out.images = ls?.code === 0 ? ls.stdout.split('\n').filter((i) => i && !i.startsWith('sha256:')) : [];
  return out;
}
