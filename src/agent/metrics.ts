// The agent's Prometheus metrics on its own registry (never prom-client's global one, so two agents
// in one process — as in tests — do not collide). The metric names are a contract: the scenario
// runner scrapes them. Hot-path updates go through cached label children, so a call costs a Map
// lookup and an add, and nothing is formatted until somebody scrapes.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { ConfigError } from '../errors.js';

export interface AgentMetrics {
  readonly registry: Registry;
  /** One finished call (unary) or stream, by method name (FetchJWTSVID) and gRPC status name (OK). */
  callDone(method: string, code: string): void;
  rateLimited(method: string, keyType: string): void;
  /** Marks an attestation in flight; the returned function ends it and records its duration. */
  attestationStarted(): () => void;
  connectionOpened(): void;
  connectionClosed(): void;
  kubeletFetch(outcome: 'ok' | 'error', bytes: number): void;
}

/** A count under two label values, and how much of it prom-client has been given. */
interface Tally {
  labels: [string, string];
  n: number;
  reported: number;
}

/** Counts one (a, b); two Map levels, so no key string is built per call. */
function tally(counts: Map<string, Map<string, Tally>>, a: string, b: string): void {
  let inner = counts.get(a);
  if (!inner) counts.set(a, (inner = new Map<string, Tally>()));
  const t = inner.get(b);
  if (t) t.n++;
  else inner.set(b, { labels: [a, b], n: 1, reported: 0 });
}

function flush(t: Tally, counter: Counter<string>): void {
  if (t.n === t.reported) return;
  counter.labels(...t.labels).inc(t.n - t.reported);
  t.reported = t.n;
}

export function createAgentMetrics(): AgentMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  // Per-call counts are plain numbers, handed to prom-client when somebody scrapes (collect):
  // an increment on the call path is then a Map lookup and an add, with no label hashing.
  const callCounts = new Map<string, Map<string, Tally>>();
  const limitedCounts = new Map<string, Map<string, Tally>>();
  let attestationsInflight = 0;
  new Counter({
    name: 'workload_api_calls_total',
    help: 'Workload API calls (stream opens for streaming methods) by method and final gRPC status',
    labelNames: ['method', 'code'] as const,
    registers: [registry],
    collect() {
      for (const inner of callCounts.values()) for (const t of inner.values()) flush(t, this);
    },
  });
  new Counter({
    name: 'workload_api_rate_limit_exceeded_total',
    help: 'Calls rejected by the rate limiter, by method and limiter key type',
    labelNames: ['method', 'key_type'] as const,
    registers: [registry],
    collect() {
      for (const inner of limitedCounts.values()) for (const t of inner.values()) flush(t, this);
    },
  });
  new Gauge({
    name: 'workload_api_attestations_inflight',
    help: 'Workload attestations running now (including ones whose caller has gone away)',
    registers: [registry],
    collect() {
      this.set(attestationsInflight);
    },
  });
  const duration = new Histogram({
    name: 'workload_api_attestation_duration_seconds',
    help: 'Duration of workload attestations, successful or not',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const connections = new Gauge({
    name: 'workload_api_open_connections',
    help: 'Open Unix-socket connections to the Workload API',
    registers: [registry],
  });
  const kubelet = new Counter({
    name: 'workload_api_kubelet_fetches_total',
    help: 'Kubelet GET /pods requests by outcome',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  // Both outcomes exist from the start, so a scraper sees 0 rather than a missing series.
  kubelet.labels('ok').inc(0);
  kubelet.labels('error').inc(0);
  const kubeletBytes = new Counter({
    name: 'workload_api_kubelet_fetch_bytes_total',
    help: 'Bytes of kubelet /pods responses read',
    registers: [registry],
  });

  return {
    registry,
    callDone(method, code) {
      tally(callCounts, method, code);
    },
    rateLimited(method, keyType) {
      tally(limitedCounts, method, keyType);
    },
    attestationStarted() {
      attestationsInflight++;
      const start = performance.now();
      let ended = false;
      return () => {
        if (ended) return;
        ended = true;
        attestationsInflight--;
        duration.observe((performance.now() - start) / 1000);
      };
    },
    connectionOpened: () => connections.inc(),
    connectionClosed: () => connections.dec(),
    kubeletFetch(outcome, bytes) {
      kubelet.labels(outcome).inc();
      if (bytes > 0) kubeletBytes.inc(bytes);
    },
  };
}

export interface MetricsEndpoint {
  /** http://<host>:<real port>/metrics */
  readonly url: string;
  close(): Promise<void>;
}

/** Splits "host:port" (port 0 = any free port); the config schema has already checked the shape. */
export function parseHostPort(hostPort: string, what = 'metrics'): { host: string; port: number } {
  const i = hostPort.lastIndexOf(':');
  const host = hostPort.slice(0, i) || '127.0.0.1';
  const port = Number(hostPort.slice(i + 1));
  if (i < 0 || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError(`${what} must be host:port with a port from 0 to 65535, got ${JSON.stringify(hostPort)}`);
  }
  return { host, port };
}

/** Serves GET /metrics on host:port. Resolves once listening, with the real port. */
export async function serveMetrics(metrics: AgentMetrics, hostPort: string): Promise<MetricsEndpoint> {
  const { host, port } = parseHostPort(hostPort);
  const server: Server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics\n');
      return;
    }
    metrics.registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
      (err: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${err.message}\n`),
    );
  });
  // A scraper must never keep the agent from exiting.
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const shownHost = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${shownHost}:${addr.port}/metrics`,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
