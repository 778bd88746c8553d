// The socket directories (`/run/attestorm/<namespace>`, hostPath DirectoryOrCreate) live on the
// nodes, not in the API: deleting a namespace leaves them. A janitor pod per node — the project's
// image, root, the parent directory as a hostPath, in a namespace of its own — removes them once
// the namespaces whose pods mounted them are gone (a run's teardown, `kind cleanup`): a pod that
// still runs would have the kubelet re-create its directory when it restarts.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { nodeNotReady } from './agent-node.js';
import { applyObjects } from './apply.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { labels, MANAGED_BY, MANAGER, ROLE_LABEL } from '../../kube/index.js';
import type { KubeObject } from '../../kube/index.js';

export const SOCKET_PARENT = '/run/attestorm';
const MOUNT = '/host/run/attestorm';

/**
 * Runs in the janitor: removes the directories below the parent named in ATTESTORM_REMOVE (a JSON
 * list of namespace names), or with ATTESTORM_KEEP (a JSON list) every run's (`atst-…`) but those.
 */
export const JANITOR_SCRIPT = [
  "const fs = require('fs'), path = require('path');",
  'const root = process.env.ATTESTORM_SOCKET_PARENT;',
  'const keep = process.env.ATTESTORM_KEEP ? new Set(JSON.parse(process.env.ATTESTORM_KEEP)) : null;',
  "const names = keep ? (fs.existsSync(root) ? fs.readdirSync(root) : []).filter((n) => n.startsWith('atst-') && !keep.has(n)) : JSON.parse(process.env.ATTESTORM_REMOVE || '[]');",
  'for (const name of names) {',
  '  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name)) continue;',
  '  const dir = path.join(root, name);',
  "  if (fs.existsSync(dir)) { fs.rmSync(dir, { recursive: true, force: true }); console.log('removed ' + dir); }",
  '}',
].join('\n');

/** Namespace names whose directories go, or every run's directory except those of `allExcept`. */
export type SocketDirSelection = string[] | { allExcept: string[] };

export function janitorPod(o: { namespace: string; node: string; image: string; remove: SocketDirSelection; runId: string }): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `socket-janitor-${o.node}`
        .slice(0, 63)
        .replace(/[^a-z0-9-]/g, '-')
        .replace(/-+$/, ''),
      namespace: o.namespace,
      labels: { ...labels(o.runId, 'janitor'), [ROLE_LABEL]: 'socket-janitor', [MANAGED_BY]: MANAGER },
    },
    spec: {
      nodeName: o.node, // bypasses the scheduler: one per node, wherever a socket directory may be
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 0,
      automountServiceAccountToken: false,
      tolerations: [{ operator: 'Exists' }],
      containers: [
        {
          name: 'janitor',
          image: o.image,
          imagePullPolicy: 'IfNotPresent',
          command: ['node', '-e', JANITOR_SCRIPT],
          env: [
            { name: 'ATTESTORM_SOCKET_PARENT', value: MOUNT },
            Array.isArray(o.remove)
              ? { name: 'ATTESTORM_REMOVE', value: JSON.stringify(o.remove) }
              : { name: 'ATTESTORM_KEEP', value: JSON.stringify(o.remove.allExcept) },
          ],
          // The directories were created by the kubelet as root (then handed to uid 1000): root removes them.
          securityContext: { runAsUser: 0, runAsGroup: 0, runAsNonRoot: false, allowPrivilegeEscalation: false },
          volumeMounts: [{ name: 'socket-parent', mountPath: MOUNT }],
        },
      ],
      volumes: [{ name: 'socket-parent', hostPath: { path: SOCKET_PARENT, type: 'DirectoryOrCreate' } }],
    },
  };
}

/**
 * Removes the socket directories of `remove` (namespace names) on every node, from janitor pods in
 * `namespace`; waits for them up to timeoutMs. Returns a problem per node that did not finish (not thrown:
 * a leftover directory must not fail a teardown).
 */
export async function removeSocketDirs(
  kc: KubeConfig,
  o: { namespace: string; image: string; remove: SocketDirSelection; runId: string; timeoutMs?: number; lostNodes?: string[] },
): Promise<string[]> {
  if (Array.isArray(o.remove) && !o.remove.length) return [];
  const core = kc.makeApiClient(CoreV1Api);
  const problems: string[] = [];
  const nodes: string[] = [];
  // A node whose kubelet no longer serves (its container removed, its engine down) would never run
  // its janitor: said, not waited for.
  for (const n of (await core.listNode()).items) {
    const name = n.metadata?.name;
    if (!name) continue;
    const down = o.lostNodes?.includes(name) ? 'gone' : nodeNotReady(n);
    if (down) problems.push(`node ${name} is ${down}: no janitor runs there`);
    else nodes.push(name);
  }
  const pods = nodes.map((node) => janitorPod({ ...o, node }));
  const pending = new Set(pods.map((p) => p.metadata.name));
  for (const p of pods) {
    try {
      await applyObjects(kc, [p]);
    } catch (err) {
      problems.push(`socket janitor on ${(p.spec as { nodeName: string }).nodeName}: ${(err as Error).message}`);
      pending.delete(p.metadata.name);
    }
  }
  const until = Date.now() + (o.timeoutMs ?? 30_000);
  while (pending.size && Date.now() < until) {
    for (const name of [...pending]) {
      const pod = await core.readNamespacedPod({ name, namespace: o.namespace }).catch(() => null);
      const phase = pod?.status?.phase;
      if (phase === 'Succeeded') pending.delete(name);
      else if (phase === 'Failed') {
        pending.delete(name);
        problems.push(
          `socket janitor ${name} failed: ${pod?.status?.containerStatuses?.[0]?.state?.terminated?.message ?? pod?.status?.message ?? 'no message'}`,
        );
      }
    }
    if (pending.size) await sleep(300);
  }
  for (const name of pending) problems.push(`socket janitor ${name} did not finish within ${(o.timeoutMs ?? 30_000) / 1000} s`);
  for (const p of pods) await core.deleteNamespacedPod({ name: p.metadata.name, namespace: o.namespace, gracePeriodSeconds: 0 }).catch(() => undefined);
  return problems;
}
