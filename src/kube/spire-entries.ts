// SPIRE variants: the generator pods' registration entry, created through spire-server's own CLI
// in its pod (the images are FROM scratch: no shell, the binary is called directly).
import { Writable } from 'node:stream';
import { CoreV1Api, Exec, type KubeConfig } from '@kubernetes/client-node';
import { RunError } from '../errors.js';
import type { RenderContext } from './render/objects.js';
import { SPIRE_SERVER, spireAgentId, spireEntryCommand } from './render/agent-spire.js';

function sink(): { stream: Writable; text: () => string } {
  let text = '';
  return { stream: new Writable({ write: (c, _e, cb) => void ((text += String(c)), cb()) }), text: () => text };
}

export async function execInPod(
  kc: KubeConfig,
  namespace: string,
  pod: string,
  container: string,
  command: string[],
): Promise<{ ok: boolean; stdout: string; stderr: string; message: string }> {
  const out = sink();
  const err = sink();
  return new Promise((resolve, reject) => {
    new Exec(kc)
      .exec(namespace, pod, container, command, out.stream, err.stream, null, false, (status) =>
        resolve({ ok: status.status === 'Success', stdout: out.text(), stderr: err.text(), message: status.message ?? '' }),
      )
      .catch(reject);
  });
}

/** Creates the generators' entry under the agent's k8s_psat ID on the (single) node. */
export async function createGeneratorEntry(kc: KubeConfig, ctx: RenderContext, nodeUid: string): Promise<void> {
  const pods = await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: ctx.namespace, labelSelector: 'attestorm.dev/role=spire-server' });
  const server = pods.items.find((p) => p.status?.containerStatuses?.[0]?.ready)?.metadata?.name;
  if (!server) throw new RunError(`spire: no ready spire-server pod in ${ctx.namespace} to create the registration entry in`);
  const command = spireEntryCommand(ctx, spireAgentId(ctx, nodeUid));
  let r: Awaited<ReturnType<typeof execInPod>>;
  try {
    r = await execInPod(kc, ctx.namespace, server, SPIRE_SERVER, command);
  } catch (err) {
    throw new RunError(`spire: exec into ${ctx.namespace}/${server} failed: ${(err as Error).message}`, { cause: err });
  }
  if (!r.ok) throw new RunError(`spire: \`${command.join(' ')}\` failed in ${ctx.namespace}/${server}: ${r.message} ${r.stderr.trim()}`);
}
