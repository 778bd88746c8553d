// A real SPIRE deployment as the agent under test: spire-server (SQLite in the pod, k8s_psat node
// attestation, bundle published to a ConfigMap) and spire-agent as a DaemonSet (hostPID, host
// network, the k8s workload attestor against the real kubelet), memory requests = limits.
import { clusterScopedName } from './names.js';
import { meta, quantity, type KubeObject, type RenderContext } from './objects.js';
import { agentDaemonSet, baseLabels, clusterRoleFor, nodePlacement, serviceAccount, socketMount, socketVolume } from './base.js';
import { AGENT_NAME } from './agent-reference.js';
import { serverPlacement } from './topology.js';
import { SOCKET_DIR, SOCKET_FILE } from './variant.js';

export const SPIRE_SERVER = 'spire-server';
export const SPIRE_BUNDLE = 'spire-bundle';
const SERVER_BIN = '/opt/spire/bin/spire-server';
const SERVER_PORT = 8081;
/** The agent's health port; on the host network the server's must differ (both pods share the node's ports). */
const AGENT_HEALTH_PORT = 8080;
function serverHealthPort(ctx: RenderContext): number {
  return ctx.hostApiServer ? 8082 : 8080;
}

/** Where the agent dials the server: its Service by DNS, or loopback when the server shares the node's host network. */
function serverAddress(ctx: RenderContext): string {
  return ctx.hostApiServer ? '127.0.0.1' : `${SPIRE_SERVER}.${ctx.namespace}.svc.cluster.local`;
}

/** SPIRE's experimental Workload API limiter: only non-zero methods (0 means unlimited). */
function rateLimitBlock(limits: Record<string, number>): string {
  const set = Object.entries(limits).filter(([, v]) => v > 0);
  if (!set.length) return '';
  return `  experimental {\n    ratelimit {\n${set.map(([k, v]) => `      ${k} = ${v}`).join('\n')}\n    }\n  }\n`;
}

export function spireServerConf(ctx: RenderContext): string {
  return `server {
  bind_address = "${ctx.hostApiServer ? '127.0.0.1' : '0.0.0.0'}"
  bind_port = "${SERVER_PORT}"
  trust_domain = "${ctx.trustDomain}"
  data_dir = "/run/spire/data"
  log_level = "INFO"
}
plugins {
  DataStore "sql" {
    plugin_data {
      database_type = "sqlite3"
      connection_string = "/run/spire/data/datastore.sqlite3"
    }
  }
  KeyManager "memory" {
    plugin_data {}
  }
  NodeAttestor "k8s_psat" {
    plugin_data {
      clusters = {
        "${ctx.clusterName}" = {
          service_account_allow_list = ["${ctx.namespace}:${AGENT_NAME}"]
        }
      }
    }
  }
  Notifier "k8sbundle" {
    plugin_data {
      namespace = "${ctx.namespace}"
      config_map = "${SPIRE_BUNDLE}"
    }
  }
}
health_checks {
  listener_enabled = true
  bind_address = "0.0.0.0"
  bind_port = "${serverHealthPort(ctx)}"
  live_path = "/live"
  ready_path = "/ready"
}
`;
}

export function spireAgentConf(ctx: RenderContext): string {
  return `agent {
  data_dir = "/run/spire/agent-data"
  log_level = "INFO"
  server_address = "${serverAddress(ctx)}"
  server_port = "${SERVER_PORT}"
  socket_path = "${SOCKET_DIR}/${SOCKET_FILE}"
  trust_bundle_path = "/run/spire/bundle/bundle.crt"
  trust_domain = "${ctx.trustDomain}"
${rateLimitBlock(ctx.variant.rateLimits)}}
plugins {
  NodeAttestor "k8s_psat" {
    plugin_data {
      cluster = "${ctx.clusterName}"
    }
  }
  KeyManager "memory" {
    plugin_data {}
  }
  WorkloadAttestor "k8s" {
    plugin_data {
      skip_kubelet_verification = true
    }
  }
  WorkloadAttestor "unix" {
    plugin_data {}
  }
}
health_checks {
  listener_enabled = true
  bind_address = "0.0.0.0"
  bind_port = "${AGENT_HEALTH_PORT}"
  live_path = "/live"
  ready_path = "/ready"
}
`;
}

/**
 * On a node whose API server listens on loopback, a pod network pod reaches neither it nor the
 * Service IP (no kube-proxy): spire-server (TokenReview for k8s_psat, the bundle ConfigMap) runs on
 * the host network, on the agent's node, with the API server's address in the variables client-go's
 * in-cluster config reads (a container's own env wins over the kubelet's service variables).
 */
function serverNetwork(ctx: RenderContext): Record<string, unknown> {
  return ctx.hostApiServer ? { hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet', ...nodePlacement(ctx) } : serverPlacement(ctx);
}

function apiServerEnv(api: { host: string; port: number }): Array<{ name: string; value: string }> {
  return [
    { name: 'KUBERNETES_SERVICE_HOST', value: api.host },
    { name: 'KUBERNETES_SERVICE_PORT', value: String(api.port) },
  ];
}

function spireServer(ctx: RenderContext): KubeObject[] {
  const l = baseLabels(ctx, { 'attestorm.dev/role': 'spire-server' });
  const images = ctx.variant.spire ?? { serverImage: ctx.images.spireServer, agentImage: ctx.images.spireAgent };
  return [
    serviceAccount(ctx, SPIRE_SERVER),
    ...clusterRoleFor(ctx, clusterScopedName(ctx.namespace, 'spire-server'), SPIRE_SERVER, [
      { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
      { apiGroups: [''], resources: ['pods', 'nodes'], verbs: ['get', 'list', 'watch'] },
    ]),
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: meta(ctx, 'spire-bundle-writer', l),
      rules: [{ apiGroups: [''], resources: ['configmaps'], resourceNames: [SPIRE_BUNDLE], verbs: ['get', 'patch'] }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: meta(ctx, 'spire-bundle-writer', l),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'spire-bundle-writer' },
      subjects: [{ kind: 'ServiceAccount', name: SPIRE_SERVER, namespace: ctx.namespace }],
    },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta(ctx, SPIRE_BUNDLE, l), data: {} },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta(ctx, 'spire-server-config', l), data: { 'server.conf': spireServerConf(ctx) } },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: meta(ctx, SPIRE_SERVER, l),
      spec: {
        replicas: 1,
        selector: { matchLabels: { 'attestorm.dev/role': 'spire-server' } },
        template: {
          metadata: { labels: l },
          spec: {
            serviceAccountName: SPIRE_SERVER,
            securityContext: { fsGroup: 1000 },
            ...serverNetwork(ctx),
            containers: [
              {
                name: SPIRE_SERVER,
                image: images.serverImage,
                imagePullPolicy: 'IfNotPresent',
                args: ['-config', '/run/spire/config/server.conf'],
                ...(ctx.hostApiServer ? { env: apiServerEnv(ctx.hostApiServer) } : {}),
                ports: [
                  { name: 'grpc', containerPort: SERVER_PORT },
                  { name: 'health', containerPort: serverHealthPort(ctx) },
                ],
                readinessProbe: { httpGet: { path: '/ready', port: serverHealthPort(ctx) }, periodSeconds: 2 },
                livenessProbe: { httpGet: { path: '/live', port: serverHealthPort(ctx) }, periodSeconds: 10, failureThreshold: 6 },
                volumeMounts: [
                  { name: 'config', mountPath: '/run/spire/config', readOnly: true },
                  { name: 'data', mountPath: '/run/spire/data' },
                ],
              },
            ],
            volumes: [
              { name: 'config', configMap: { name: 'spire-server-config' } },
              { name: 'data', emptyDir: {} },
            ],
          },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta(ctx, SPIRE_SERVER, l),
      spec: { selector: { 'attestorm.dev/role': 'spire-server' }, ports: [{ name: 'grpc', port: SERVER_PORT, targetPort: SERVER_PORT, protocol: 'TCP' }] },
    },
  ];
}

function spireAgent(ctx: RenderContext): KubeObject[] {
  const l = baseLabels(ctx, { 'attestorm.dev/role': 'agent' });
  const images = ctx.variant.spire ?? { serverImage: ctx.images.spireServer, agentImage: ctx.images.spireAgent };
  const mem = quantity(ctx.variant.memoryLimitBytes);
  return [
    serviceAccount(ctx, AGENT_NAME),
    ...clusterRoleFor(ctx, clusterScopedName(ctx.namespace, 'agent'), AGENT_NAME, [
      { apiGroups: [''], resources: ['pods', 'nodes', 'nodes/proxy'], verbs: ['get'] },
    ]),
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta(ctx, 'spire-agent-config', l), data: { 'agent.conf': spireAgentConf(ctx) } },
    agentDaemonSet(ctx, AGENT_NAME, l, {
      containers: [
        {
          name: AGENT_NAME,
          image: images.agentImage,
          imagePullPolicy: 'IfNotPresent',
          args: ['-config', '/run/spire/config/agent.conf'],
          ...(ctx.variant.agentEnv ? { env: Object.entries(ctx.variant.agentEnv).map(([name, value]) => ({ name, value })) } : {}),
          resources: { requests: { memory: mem, cpu: '100m' }, limits: { memory: mem } },
          securityContext: { runAsUser: 0 },
          readinessProbe: { httpGet: { path: '/ready', port: AGENT_HEALTH_PORT }, periodSeconds: 1, failureThreshold: 2 },
          volumeMounts: [
            socketMount(false),
            { name: 'config', mountPath: '/run/spire/config', readOnly: true },
            { name: 'bundle', mountPath: '/run/spire/bundle', readOnly: true },
            { name: 'agent-data', mountPath: '/run/spire/agent-data' },
            { name: 'psat', mountPath: '/var/run/secrets/tokens', readOnly: true },
          ],
        },
      ],
      volumes: [
        socketVolume(ctx),
        { name: 'config', configMap: { name: 'spire-agent-config' } },
        { name: 'bundle', configMap: { name: SPIRE_BUNDLE } },
        { name: 'agent-data', emptyDir: {} },
        { name: 'psat', projected: { sources: [{ serviceAccountToken: { path: 'spire-agent', expirationSeconds: 7200, audience: 'spire-server' } }] } },
      ],
    }),
  ];
}

export function renderSpire(ctx: RenderContext): KubeObject[] {
  return [...spireServer(ctx), ...spireAgent(ctx)];
}

/** argv of `spire-server entry create` for the generator pods (run through Exec in the server pod). */
export function spireEntryCommand(ctx: RenderContext, parentId: string): string[] {
  return [
    SERVER_BIN,
    'entry',
    'create',
    '-parentID',
    parentId,
    '-spiffeID',
    `spiffe://${ctx.trustDomain}/ns/${ctx.namespace}/sa/generator`,
    '-selector',
    `k8s:ns:${ctx.namespace}`,
    '-selector',
    'k8s:sa:generator',
  ];
}

/** The node-alias-free parent: the agent's own ID under k8s_psat (`.../k8s_psat/<cluster>/<node uid>`). */
export function spireAgentId(ctx: RenderContext, nodeUid: string): string {
  return `spiffe://${ctx.trustDomain}/spire/agent/k8s_psat/${ctx.clusterName}/${nodeUid}`;
}
