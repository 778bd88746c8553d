// The spire-agent configuration attestorm generates: join-token node attestation against the local
// server, the in-memory key manager, the unix and k8s workload attestors (k8s pointed at the
// kubelet emulator), Prometheus telemetry and health checks on loopback, and SPIRE's own
// Workload API limiter when limits are given.
import { ConfigError } from '../errors.js';
import { healthChecksBlock, mergeHcl, renderHcl, type HclTree } from './hcl.js';
import { SPIRE_RATE_LIMIT_KEYS, type SpireRateLimits } from './options.js';
import { formatVersion, type SpireAgentGrammar } from './release.js';

/** How the k8s attestor reaches the kubelet emulator. */
export type KubeletAccess =
  /** http://127.0.0.1:<port>/pods, no credentials: SPIRE's read-only mode always dials 127.0.0.1. */
  | { mode: 'read-only'; port: number }
  /** https://<host>:<port>/pods with the emulator's CA and a bearer token (or anonymous). */
  | { mode: 'secure'; host: string; port: number; caFile: string; tokenFile: string | null };

/**
 * The k8s attestor's access for a kubelet emulator URL: http on 127.0.0.1 → read-only port;
 * https → secure port with the CA file (and token file when the emulator checks one).
 */
export function kubeletAccessFor(url: string, files: { caFile?: string | null; tokenFile?: string | null } = {}): KubeletAccess {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new ConfigError(`kubelet URL must be http(s)://host:port, got ${JSON.stringify(url)}`);
  }
  const port = Number(u.port);
  if (!port) throw new ConfigError(`kubelet URL must carry an explicit port, got ${JSON.stringify(url)}`);
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (u.protocol === 'http:') {
    if (host !== '127.0.0.1')
      throw new ConfigError(
        `kubelet URL ${url}: SPIRE's read-only kubelet port is always dialled on 127.0.0.1; serve the emulator there (kubelet.listen 127.0.0.1:0) or use tls`,
      );
    if (files.tokenFile)
      throw new ConfigError(`kubelet URL ${url}: SPIRE sends no token on the read-only port, but the emulator requires one; drop kubelet.token or use tls`);
    return { mode: 'read-only', port };
  }
  if (u.protocol === 'https:') {
    if (!files.caFile) throw new ConfigError(`kubelet URL ${url}: the secure port needs the emulator's CA file`);
    return { mode: 'secure', host, port, caFile: files.caFile, tokenFile: files.tokenFile ?? null };
  }
  throw new ConfigError(`kubelet URL must be http:// or https://, got ${JSON.stringify(url)}`);
}

export interface AgentConfigInput {
  trustDomain: string;
  serverPort: number;
  dataDir: string;
  socketPath: string;
  trustBundlePath: string;
  kubelet: KubeletAccess;
  telemetryPort: number;
  healthPort: number;
  rateLimits?: SpireRateLimits;
  k8s?: { pollRetryIntervalMs?: number; maxPollAttempts?: number };
  logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  extra?: HclTree;
  /** The release's grammar (spireAgentGrammar): a generated key it lacks is refused. Absent: the newest. */
  grammar?: SpireAgentGrammar;
}

function k8sPluginData(c: AgentConfigInput): HclTree {
  const data: HclTree = {};
  const k = c.kubelet;
  if (k.mode === 'read-only') {
    data.kubelet_read_only_port = k.port;
  } else {
    data.kubelet_secure_port = k.port;
    data.kubelet_ca_path = k.caFile;
    if (k.tokenFile) data.token_path = k.tokenFile;
    else data.use_anonymous_authentication = true;
    // Without a node name SPIRE dials 127.0.0.1 (the agent runs without MY_NODE_NAME).
    if (k.host !== '127.0.0.1') data.node_name = k.host;
  }
  if (c.k8s?.pollRetryIntervalMs !== undefined) data.poll_retry_interval = `${c.k8s.pollRetryIntervalMs}ms`;
  if (c.k8s?.maxPollAttempts !== undefined) data.max_poll_attempts = c.k8s.maxPollAttempts;
  const unknown = c.grammar ? Object.keys(data).filter((k) => !c.grammar!.k8sKeys.includes(k)) : [];
  if (unknown.length) throw new ConfigError(`SPIRE ${formatVersion(c.grammar!.version)}'s k8s workload attestor has no ${unknown.join(', ')}`);
  return data;
}

export function agentConfigTree(c: AgentConfigInput): HclTree {
  const agent: HclTree = {
    trust_domain: c.trustDomain,
    server_address: '127.0.0.1',
    server_port: c.serverPort,
    data_dir: c.dataDir,
    socket_path: c.socketPath,
    trust_bundle_path: c.trustBundlePath,
    log_level: c.logLevel ?? 'INFO',
  };
  const limits: HclTree = {};
  for (const key of SPIRE_RATE_LIMIT_KEYS) {
    const v = c.rateLimits?.[key];
    // SPIRE treats 0 as "no limit": such keys are left out.
    if (v === undefined || v <= 0) continue;
    if (c.grammar && !c.grammar.rateLimitKeys.includes(key)) {
      throw new ConfigError(
        `rateLimits.${key} is set (${v}), but SPIRE ${formatVersion(c.grammar.version)} (${c.grammar.version.text}) has no agent.experimental.ratelimit.${key}`,
      );
    }
    limits[key] = v;
  }
  if (Object.keys(limits).length > 0) agent.experimental = { ratelimit: limits };
  const tree: HclTree = {
    agent,
    plugins: {
      'NodeAttestor "join_token"': { plugin_data: {} },
      'KeyManager "memory"': { plugin_data: {} },
      'WorkloadAttestor "unix"': { plugin_data: {} },
      'WorkloadAttestor "k8s"': { plugin_data: k8sPluginData(c) },
    },
    telemetry: { Prometheus: { host: '127.0.0.1', port: c.telemetryPort } },
    health_checks: healthChecksBlock(c.healthPort),
  };
  return mergeHcl(tree, c.extra);
}

export function renderAgentConfig(c: AgentConfigInput): string {
  return renderHcl(agentConfigTree(c));
}
