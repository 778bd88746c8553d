// The kubelet's read-only pod endpoint on loopback: GET /pods as a v1 PodList of the sandbox's pods
// (each visible only visibilityDelayMs after it started) plus filler pods (up to nodePods running
// pods, each of containersPerPod containers when set) and terminatedPods ended ones, with latency, failures and
// a bearer-token check. The document is serialized once per change of the visible pod set. Answers
// wait a fixed latency plus, with a service time, their turn in a one-at-a-time queue (a busy kubelet
// whose every later answer waits for the ones before it). Faults can be switched on and off at run
// time: extra latency, an error rate, down (refused) and stall (no answer). A latency model adds
// time that grows with the requests in flight and the list's size, as a loaded kubelet's does.
// Every /pods request is told, once over, to the emulator's listeners (kubelet-request-log.ts).
import type { Socket } from 'node:net';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { ConfigError } from '../errors.js';
import { fillerPods, terminatedPods } from './filler-pods.js';
import { kubeletFaults, type KubeletFaultControls, type KubeletFaultState } from './kubelet-faults.js';
import { DEFAULT_NODE_PODS, parseKubeletOptions, splitHostPort, type KubeletEmulatorOptions } from './options.js';
import { KubeletRequestLog, type KubeletRequestListener, type PendingRequest } from './kubelet-request-log.js';
import { modeledLatencyMs, type ResolvedLatencyModel } from './latency-model.js';
import { podSeenAt, type PodDoc } from './pod-doc.js';
import { generateServingCert } from './self-signed.js';

export type { KubeletFaultControls, KubeletFaultState } from './kubelet-faults.js';
export type { KubeletRequestListener, KubeletRequestRecord } from './kubelet-request-log.js';

export interface KubeletEmulatorStats {
  /** Every request, whatever its path or outcome. */
  requests: number;
  /** GET /pods answered 200. */
  podsServed: number;
  /** Answered 500 by the failure rate. */
  failures: number;
  /** Answered 401 for a missing or wrong bearer token. */
  unauthorized: number;
  /** Any other path (404) or method (405). */
  notFound: number;
  /** Response body bytes written. */
  bytesServed: number;
  /** Times the PodList was serialized (once per change of the visible pod set, not per request). */
  documents: number;
  /** Size of the largest PodList document built so far (0 before the first). */
  maxDocumentBytes: number;
  /** Requests held unanswered by a stall fault (their connections are destroyed when it clears). */
  stalled: number;
  /** Longest wait of a /pods request for its turn in the service queue (0 without a service time). */
  maxQueueWaitMs: number;
}

export interface KubeletEmulator {
  /** e.g. http://127.0.0.1:41234 or https://127.0.0.1:41234 */
  readonly url: string;
  readonly port: number;
  /** PEM of the self-signed serving certificate (its own CA) when tls is on. */
  readonly caPem: string | null;
  readonly token: string | null;
  readonly requests: number;
  readonly bytesServed: number;
  stats(): KubeletEmulatorStats;
  /** Pods in the current document (visible sandbox pods, filler and terminated pods). */
  visiblePods(): PodDoc[];
  /** What GET /pods would answer now: its pods by kind and its size in bytes. */
  podList(): PodListSnapshot;
  /** Run-time faults (see KubeletFaultControls). */
  readonly faults: KubeletFaultControls;
  /** Calls `listener` with every /pods request once it is over (answered, refused, or its client gone); returns the unsubscribe. */
  onRequest(listener: KubeletRequestListener): () => void;
  close(): Promise<void>;
}

export interface StartKubeletEmulatorOptions extends KubeletEmulatorOptions {
  /**
   * The node's own pods, read on every request (keep it cheap: return the same objects). A pod
   * becomes visible visibilityDelayMs after its `kubernetes.io/config.seen` annotation (buildPodDoc
   * sets it to the pod's start); a pod without it is visible at once. Pods not returned disappear.
   */
  podSource: () => readonly PodDoc[];
}

/** The /pods document at one moment. */
export interface PodListSnapshot {
  /** Items of the list: the sandbox's visible pods, filler pods and terminated pods. */
  items: number;
  /** Running pods listed (the sandbox's visible pods and the filler pods). */
  runningPods: number;
  /** Ended pods still listed. */
  terminatedPods: number;
  /** Containers of each filler and terminated pod when the shape fixes it; null: each app's own. */
  containersPerPod: number | null;
  /** The response body's size. */
  bytes: number;
}

const jsonHeaders = { 'content-type': 'application/json' };

function status(code: number, reason: string, message: string): Buffer {
  return Buffer.from(JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code }));
}

export async function startKubeletEmulator(input: StartKubeletEmulatorOptions): Promise<KubeletEmulator> {
  if (typeof input?.podSource !== 'function') throw new ConfigError('kubelet.podSource must be a function returning pods, got ' + typeof input?.podSource);
  const { podSource, ...rest } = input;
  const opts = parseKubeletOptions(rest);
  const hp = splitHostPort(opts.listen)!;

  const fillerCount = opts.fillerPods ?? Math.max(0, (opts.nodePods ?? DEFAULT_NODE_PODS) - podSource().length);
  const startedAt = Date.now();
  const shape = { containersPerPod: opts.containersPerPod };
  const filler = fillerPods(fillerCount, opts.nodeName, startedAt, shape);
  const ended = terminatedPods(opts.terminatedPods, opts.nodeName, startedAt, shape);
  const stats: KubeletEmulatorStats = {
    requests: 0,
    podsServed: 0,
    failures: 0,
    unauthorized: 0,
    notFound: 0,
    bytesServed: 0,
    documents: 0,
    maxDocumentBytes: 0,
    stalled: 0,
    maxQueueWaitMs: 0,
  };
  const fault: KubeletFaultState = { extraLatencyMs: 0, errorRate: null, down: false, stalled: false };
  const stalledSockets = new Set<Socket>();
  const podList = podListDocument(podSource, [...filler, ...ended], opts.visibilityDelayMs, (bytes) => {
    stats.documents++;
    stats.maxDocumentBytes = Math.max(stats.maxDocumentBytes, bytes);
  });
  const documentBody = podList.body;

  const timers = new Set<NodeJS.Timeout>();
  const log = new KubeletRequestLog();
  const handle = kubeletRequestHandler({ opts, stats, fault, stalledSockets, timers, documentBody, log });

  const { server, caPem, port, url } = await listenKubelet(opts, hp, handle);

  let closing: Promise<void> | null = null;
  const { faults, destroyStalled, settled } = kubeletFaults({ server, host: hp.host, port, fault, stalledSockets, closing: () => closing !== null });
  return {
    url,
    port,
    caPem,
    token: opts.token ?? null,
    get requests() {
      return stats.requests;
    },
    get bytesServed() {
      return stats.bytesServed;
    },
    stats: () => ({ ...stats }),
    visiblePods: () => [...podList.visible(), ...filler, ...ended],
    podList: () => {
      const bytes = podList.body().length;
      const visible = podList.visible().length;
      return {
        items: visible + filler.length + ended.length,
        runningPods: visible + filler.length,
        terminatedPods: ended.length,
        containersPerPod: opts.containersPerPod ?? null,
        bytes,
      };
    },
    faults,
    onRequest: (listener) => log.listen(listener),
    close: () =>
      (closing ??= settled().then(
        () =>
          new Promise<void>((resolve) => {
            for (const t of timers) clearTimeout(t);
            timers.clear();
            destroyStalled();
            if (fault.down) return resolve();
            server.close(() => resolve());
            server.closeAllConnections();
          }),
      )),
  };
}

/**
 * The /pods document: the pods visible now (a pod appears visibilityDelayMs after it started) and
 * the filler pods, rebuilt only when the visible set changes (`onBuild` gets each rebuild's size).
 */
function podListDocument(
  podSource: () => readonly PodDoc[],
  filler: readonly PodDoc[],
  visibilityDelayMs: number,
  onBuild: (bytes: number) => void,
): { body(): Buffer; visible(): PodDoc[] } {
  // Filler pods never change: their JSON is made once and spliced into every document.
  const fillerJson = filler.map((p) => JSON.stringify(p));
  const itemJson = new WeakMap<PodDoc, string>();
  const jsonOf = (p: PodDoc) => {
    let s = itemJson.get(p);
    if (s === undefined) itemJson.set(p, (s = JSON.stringify(p)));
    return s;
  };
  let cachedKey: string | null = null;
  let cachedBody: Buffer = Buffer.alloc(0);
  let cachedVisible: PodDoc[] = [];
  const visibleNow = (): PodDoc[] => {
    const now = Date.now();
    return podSource().filter((p) => {
      const seen = podSeenAt(p);
      return seen === null || seen + visibilityDelayMs <= now;
    });
  };
  const body = (): Buffer => {
    const visible = visibleNow();
    const key = visible.map((p) => p.metadata.uid).join(',');
    if (key !== cachedKey) {
      const items = [...visible.map(jsonOf), ...fillerJson];
      cachedBody = Buffer.from(`{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[${items.join(',')}]}`);
      cachedKey = key;
      cachedVisible = visible;
      onBuild(cachedBody.length);
    }
    return cachedBody;
  };
  return {
    body,
    visible() {
      body();
      return cachedVisible;
    },
  };
}

/** The HTTP(S) server on opts.listen; with TLS, a serving certificate of its own CA. */
async function listenKubelet(
  opts: { listen: string; tls: boolean; nodeName: string },
  hp: { host: string; port: number },
  handle: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ server: Server; caPem: string | null; port: number; url: string }> {
  let caPem: string | null = null;
  let server: Server;
  if (opts.tls) {
    const cert = await generateServingCert(hp.host, opts.nodeName);
    caPem = cert.certPem;
    server = createHttpsServer({ cert: cert.certPem, key: cert.keyPem }, handle);
  } else {
    server = createHttpServer(handle);
  }
  // Agents poll with keep-alive; the emulator must not be the one holding sockets open at close.
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(new ConfigError(`kubelet.listen cannot listen on ${opts.listen}: ${err.message}`, { cause: err })));
    server.listen(hp.port, hp.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = hp.host.includes(':') ? `[${hp.host}]` : hp.host;
  return { server, caPem, port, url: `${opts.tls ? 'https' : 'http'}://${urlHost}:${port}` };
}

/** What the request handler shares with the emulator: counters, faults, held sockets, answer timers, the document. */
interface RequestHandlerOptions {
  opts: { token?: string | undefined; latencyMs: number; serviceTimeMs: number; failureRate: number; latencyModel?: ResolvedLatencyModel | undefined };
  stats: KubeletEmulatorStats;
  fault: KubeletFaultState;
  stalledSockets: Set<Socket>;
  timers: Set<NodeJS.Timeout>;
  documentBody: () => Buffer;
  log: KubeletRequestLog;
}

function send(stats: KubeletEmulatorStats, res: ServerResponse, code: number, body: Buffer, pending?: PendingRequest): void {
  if (res.destroyed) return;
  pending?.answering(code, body.length);
  res.writeHead(code, { ...jsonHeaders, 'content-length': body.length });
  res.end(body);
  stats.bytesServed += body.length;
}

/** The routes: the token check, then GET /pods (held unanswered under a stall fault); 404 or 405 for anything else. */
function kubeletRequestHandler(k: RequestHandlerOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const { opts, stats, fault, stalledSockets } = k;
  const answerPods = podsAnswerer(k);
  return (req: IncomingMessage, res: ServerResponse) => {
    stats.requests++;
    const path = (req.url ?? '/').split('?')[0]!;
    const pending = path === '/pods' || path === '/pods/' ? k.log.begin(req, res) : undefined;
    if (opts.token !== undefined && req.headers.authorization !== `Bearer ${opts.token}`) {
      stats.unauthorized++;
      send(stats, res, 401, status(401, 'Unauthorized', 'Unauthorized'), pending);
      return;
    }
    if (path !== '/pods' && path !== '/pods/') {
      stats.notFound++;
      send(stats, res, 404, status(404, 'NotFound', `404 page not found: ${path}`));
      return;
    }
    if (req.method !== 'GET') {
      stats.notFound++;
      send(stats, res, 405, status(405, 'MethodNotAllowed', `method ${req.method} not allowed on /pods`), pending);
      return;
    }
    if (fault.stalled) {
      stats.stalled++;
      stalledSockets.add(req.socket);
      req.socket.once('close', () => stalledSockets.delete(req.socket));
      return;
    }
    answerPods(res, pending!);
  };
}

/**
 * The answer to GET /pods: the document or a 500 by the failure rate (or a fault's error rate),
 * after the configured latency plus a fault's and the latency model's, and, with a service time,
 * the wait for its turn in a one-at-a-time queue.
 */
function podsAnswerer(k: RequestHandlerOptions): (res: ServerResponse, pending: PendingRequest) => void {
  const { opts, stats, fault, timers, documentBody, log } = k;
  // When the kubelet is done with the last /pods answer queued so far (service time mode).
  let queueFreeAt = 0;
  return (res: ServerResponse, pending: PendingRequest) => {
    const answer = () => {
      const failureRate = fault.errorRate ?? opts.failureRate;
      if (failureRate > 0 && Math.random() < failureRate) {
        stats.failures++;
        send(
          stats,
          res,
          500,
          status(500, 'InternalError', fault.errorRate !== null ? 'emulated kubelet failure (fault: error rate)' : 'emulated kubelet failure (failureRate)'),
          pending,
        );
        return;
      }
      stats.podsServed++;
      send(stats, res, 200, documentBody(), pending);
    };
    let latencyMs = opts.latencyMs + fault.extraLatencyMs;
    // The others in flight when this one arrived: log.inFlight counts this request too.
    if (opts.latencyModel) latencyMs += modeledLatencyMs(opts.latencyModel, log.inFlight - 1, documentBody().length);
    if (opts.serviceTimeMs > 0) {
      // FIFO, one answer at a time: this request is served after every request before it, whether or
      // not their callers are still waiting (a kubelet does not notice a client that hung up).
      const now = performance.now();
      const start = Math.max(now, queueFreeAt);
      queueFreeAt = start + opts.serviceTimeMs;
      stats.maxQueueWaitMs = Math.max(stats.maxQueueWaitMs, start - now);
      pending.queueWait(start - now);
      latencyMs += queueFreeAt - now;
    }
    if (latencyMs > 0) {
      const t = setTimeout(() => {
        timers.delete(t);
        answer();
      }, latencyMs);
      timers.add(t);
    } else {
      answer();
    }
  };
}
