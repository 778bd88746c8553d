// Composes the reference agent from its config: attestors, limiter (in the slot its placement
// names), identity issuer, pipeline, handlers, the Unix-socket server and the metrics endpoint.
// Everything that can be wrong with the config is checked before anything listens.
import { ConfigError } from '../errors.js';
import { healthService, strictWorkloadService } from '../proto/index.js';
import { createAttestors } from './attestor.js';
import { effectiveKeyStrategy, type AgentConfig } from './config.js';
import { createHandlers } from './handlers.js';
import { createHealthService } from './health.js';
import { createIdentityIssuer } from './identity.js';
import { createKeyStrategy } from './limiter-key.js';
import { createRateLimiter } from './limiter.js';
import { createAgentMetrics, parseHostPort, serveMetrics, type AgentMetrics, type MetricsEndpoint } from './metrics.js';
import { createPeerCredReader } from './peercred.js';
import { composePipeline } from './pipeline.js';
import { createWorkloadServer } from './server.js';
import type { Attestor, IdentityIssuer } from './types.js';

export interface RunningAgent {
  readonly socketPath: string;
  /** http://<host>:<port>/metrics when cfg.metrics is set. */
  readonly metricsUrl?: string;
  readonly metrics: AgentMetrics;
  /** Graceful drain: stop accepting, remove the socket file, end streams, let calls finish. Idempotent. */
  close(): Promise<void>;
  /** Immediate: drop every connection and listener. */
  destroy(): void;
}

export interface StartAgentOptions {
  /** Diagnostics (attestation failures, internal errors). Default: stderr, at most 10 lines a second. */
  log?: (message: string) => void;
  /** How long close() waits for in-flight calls before cutting them. Default 5 s. */
  graceMs?: number;
  /**
   * The rate limiter's monotonic clock in ms (default performance.now). Tests inject a stopped one
   * so no bucket refills during a test, whatever the machine's speed.
   */
  limiterNow?: () => number;
  /**
   * The pid whose calls are the agent's own — the fetch its health check makes on its own socket:
   * exempt from the limiter and left out of call counts, as in SPIRE. Default process.pid; null
   * when clients in this same process are workloads (in-process tests).
   */
  agentPid?: number | null;
}

// sun_path is 108 bytes on Linux, one of them the terminating NUL.
const MAX_SOCKET_PATH_BYTES = 107;

/** A stderr logger that cannot flood: during a storm every call may fail the same way. */
export function throttledStderrLog(perSecond = 10): (message: string) => void {
  let windowStart = 0;
  let count = 0;
  let dropped = 0;
  return (message) => {
    const now = Date.now();
    if (now - windowStart >= 1000) {
      if (dropped) process.stderr.write(`attestorm agent: (${dropped} similar lines dropped)\n`);
      windowStart = now;
      count = 0;
      dropped = 0;
    }
    if (++count > perSecond) dropped++;
    else process.stderr.write(`attestorm agent: ${message}\n`);
  };
}

export async function startAgent(cfg: AgentConfig, opts: StartAgentOptions = {}): Promise<RunningAgent> {
  const log = opts.log ?? throttledStderrLog();
  const graceMs = opts.graceMs ?? 5000;
  const agentPid = opts.agentPid === undefined ? process.pid : opts.agentPid;

  // Checks without side effects first.
  if (Buffer.byteLength(cfg.socket) > MAX_SOCKET_PATH_BYTES) {
    throw new ConfigError(
      `socket must be a path of at most ${MAX_SOCKET_PATH_BYTES} bytes (the Unix socket address limit), got ${Buffer.byteLength(cfg.socket)} bytes: ${cfg.socket}`,
    );
  }
  if (cfg.metrics !== undefined) parseHostPort(cfg.metrics, 'metrics');
  const peerCred = createPeerCredReader();
  const keyName = effectiveKeyStrategy(cfg);
  const keyStrategy = keyName === null ? undefined : createKeyStrategy(keyName, cfg);
  const limiter = keyStrategy
    ? createRateLimiter(cfg.rateLimit.limits, { gcIntervalMs: cfg.rateLimit.gcInterval, ...(opts.limiterNow ? { now: opts.limiterNow } : {}) })
    : undefined;

  const metrics = createAgentMetrics();
  let attestors: Attestor[] = [];
  let issuer: IdentityIssuer | undefined;
  let endpoint: MetricsEndpoint | undefined;
  let server: ReturnType<typeof createWorkloadServer> | undefined;
  const releaseParts = () => {
    for (const a of attestors) a.close?.();
    issuer?.close();
  };
  try {
    attestors = createAttestors(cfg, { onKubeletFetch: (outcome, bytes) => metrics.kubeletFetch(outcome, bytes) });
    issuer = await createIdentityIssuer(cfg);
    const pipeline = composePipeline({ cfg, attestors, issuer, metrics, limiter, keyStrategy, log, agentPid });
    server = createWorkloadServer({ socketPath: cfg.socket, procRoot: cfg.procRoot, metrics, peerCred, log });
    const handlers = createHandlers({ pipeline, issuer, metrics, callerOf: server.callerOf, log, agentPid });
    server.grpc.addService(strictWorkloadService(), handlers.implementation);
    server.grpc.addService(healthService(), createHealthService({ socketPath: cfg.socket, log }));
    if (cfg.metrics !== undefined) {
      try {
        endpoint = await serveMetrics(metrics, cfg.metrics);
      } catch (err) {
        throw new ConfigError(`metrics ${cfg.metrics}: cannot listen (${(err as Error).message})`, { cause: err });
      }
    }
    await server.listen();

    const srv = server;
    const ep = endpoint;
    let closing: Promise<void> | undefined;
    return {
      socketPath: cfg.socket,
      metricsUrl: ep?.url,
      metrics,
      close() {
        closing ??= (async () => {
          handlers.endStreams();
          await srv.close(graceMs);
          await ep?.close();
          releaseParts();
        })();
        return closing;
      },
      destroy() {
        closing ??= Promise.resolve();
        handlers.endStreams();
        srv.destroy();
        void ep?.close();
        releaseParts();
      },
    };
  } catch (err) {
    server?.destroy();
    await endpoint?.close();
    releaseParts();
    throw err;
  }
}
