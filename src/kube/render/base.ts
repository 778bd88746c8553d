// The namespace of one variant run and the shared socket directory every pod mounts.
import { labels } from './names.js';
import { meta, PROJECT_CLI, type KubeObject, type RenderContext } from './objects.js';
import { agentPlacement } from './topology.js';
import { SOCKET_DIR } from './variant.js';

export function baseLabels(ctx: RenderContext, extra: Record<string, string> = {}): Record<string, string> {
  return labels(ctx.runId, ctx.variant.name, extra);
}

export function renderNamespace(ctx: RenderContext): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ctx.namespace, labels: baseLabels(ctx) } };
}

/** The node directory that holds this run's socket: per namespace, so leftovers never collide. */
export function hostSocketDir(ctx: RenderContext): string {
  return `/run/attestorm/${ctx.namespace}`;
}

/** The socket directory as a hostPath volume (the directory, not the file: a restarted agent recreates the socket). */
export function socketVolume(ctx: RenderContext): Record<string, unknown> {
  return { name: 'agent-socket', hostPath: { path: hostSocketDir(ctx), type: 'DirectoryOrCreate' } };
}

export function socketMount(readOnly: boolean): Record<string, unknown> {
  return { name: 'agent-socket', mountPath: SOCKET_DIR, readOnly };
}

export function serviceAccount(ctx: RenderContext, name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(ctx, name, baseLabels(ctx)) };
}

/** Pins a pod to the run's node when one is named (spire-server beside an agent that dials it on loopback). */
export function nodePlacement(ctx: RenderContext): Record<string, unknown> {
  return ctx.nodeName ? { nodeSelector: { 'kubernetes.io/hostname': ctx.nodeName } } : {};
}

/** A ClusterRole (cluster-scoped: deleted by label at teardown) and its binding to a service account. */
export function clusterRoleFor(ctx: RenderContext, name: string, sa: string, rules: Array<Record<string, unknown>>): KubeObject[] {
  const l = baseLabels(ctx);
  return [
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name, labels: l }, rules },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name, labels: l },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ kind: 'ServiceAccount', name: sa, namespace: ctx.namespace }],
    },
  ];
}

/**
 * A container of attestorm's own image running one CLI subcommand with an HTTP port the runner
 * reads through the pod proxy, ready once `/ready` answers (generator and memory-sampler pods).
 */
export function projectContainer(ctx: RenderContext, c: { name: string; args: string[]; portName: string; port: number }): Record<string, unknown> {
  return {
    name: c.name,
    image: ctx.images.project,
    imagePullPolicy: 'IfNotPresent',
    command: ['node', PROJECT_CLI],
    args: c.args,
    ports: [{ name: c.portName, containerPort: c.port }],
    readinessProbe: { httpGet: { path: '/ready', port: c.port }, periodSeconds: 1 },
  };
}

/**
 * The agent under test as a DaemonSet, whatever its kind: selected by its role label, on the host's
 * PID namespace (it reads its callers' /proc) and network (the kubelet at 127.0.0.1:10250), on the
 * agent's node; `pod` adds the kind's containers and volumes.
 */
export function agentDaemonSet(ctx: RenderContext, name: string, l: Record<string, string>, pod: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: meta(ctx, name, l),
    spec: {
      selector: { matchLabels: { 'attestorm.dev/role': 'agent' } },
      template: {
        metadata: { labels: l },
        spec: {
          serviceAccountName: name,
          hostPID: true,
          hostNetwork: true,
          dnsPolicy: 'ClusterFirstWithHostNet',
          ...agentPlacement(ctx),
          ...pod,
        },
      },
    },
  };
}
