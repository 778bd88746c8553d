// The k8s attestor's view of the kubelet: GET <url>/pods over http(s), one request in flight shared
// by every waiting attestation, and re-polls no faster than the poll interval — the two mechanisms
// that keep a real agent's memory flat when a storm of new pods all need the ~1 MiB pod list.
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { ConfigError } from '../errors.js';

/** The parts of a v1.Pod the attestor reads. */
export interface KubePod {
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    labels?: Record<string, string>;
    ownerReferences?: { kind: string; name: string; uid: string }[];
  };
  spec?: { serviceAccountName?: string; nodeName?: string };
  status?: {
    containerStatuses?: KubeContainerStatus[];
    initContainerStatuses?: KubeContainerStatus[];
    ephemeralContainerStatuses?: KubeContainerStatus[];
  };
}

export interface KubeContainerStatus {
  name: string;
  image: string;
  imageID?: string;
  /** "<runtime>://<id>", e.g. "containerd://9bca…"; absent until the container is created. */
  containerID?: string;
}

export interface PodContainer {
  pod: KubePod;
  status: KubeContainerStatus;
  init: boolean;
}

/** One fetched pod list, indexed once so each attestation's lookup is O(1). */
export interface PodListIndex {
  /** Increases with every successful fetch. */
  readonly gen: number;
  /** performance.now() when the request was sent. */
  readonly startedAt: number;
  readonly bytes: number;
  readonly pods: readonly KubePod[];
  readonly byUid: ReadonlyMap<string, KubePod>;
  /** Container ID without the "<runtime>://" prefix → its pod and status. */
  readonly byContainerId: ReadonlyMap<string, PodContainer>;
  /** The modeled parse working set (listWorkingSetBytes), held as long as the list is. */
  readonly workingSet: Buffer | null;
}

export type KubeletFailure = 'unreachable' | 'timeout' | 'status' | 'invalid-response' | 'token' | 'not-found' | 'closed';

export class KubeletError extends Error {
  readonly reason: KubeletFailure;
  constructor(reason: KubeletFailure, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.reason = reason;
    this.name = 'KubeletError';
  }
}

export interface KubeletClientOptions {
  /** Base URL; the client GETs <url>/pods. */
  url: string;
  tokenFile?: string;
  caFile?: string;
  skipVerify?: boolean;
  timeoutMs: number;
  pollIntervalMs: number;
  maxPollAttempts: number;
  /**
   * true (default, as modern agents): all waiting attestations share one request in flight.
   * false (as older agents): every attestation attempt fetches and parses its own copy.
   */
  shareFetches?: boolean;
  /**
   * Modeled cost, 0 by default: bytes every parsed pod list holds (allocated and touched) for as long
   * as anything references it, standing in for a heavier parse than JSON.parse — SPIRE's fastjson
   * tree of a ~1 MiB /pods answer was measured at ~22 MB of Go heap, JSON.parse's at ~2 MiB.
   */
  listWorkingSetBytes?: number;
  /** A response larger than this is refused (a kubelet never sends one; a wrong URL might). */
  maxBodyBytes?: number;
  onFetch?(outcome: 'ok' | 'error', bytes: number): void;
}

export class KubeletClient {
  private readonly opts: KubeletClientOptions;
  private readonly podsUrl: URL;
  private readonly agent: http.Agent;
  private readonly request: typeof http.request;
  private kept: PodListIndex | undefined;
  private gen = 0;
  private inflight: Promise<PodListIndex> | undefined;
  private lastStartAt = -Infinity;
  private scheduled: { promise: Promise<PodListIndex>; timer: NodeJS.Timeout; reject(err: Error): void } | undefined;
  private closed = false;
  private fetchCount = 0;

  constructor(opts: KubeletClientOptions) {
    let base: URL;
    try {
      base = new URL(opts.url);
    } catch {
      throw new ConfigError(`k8s.kubeletUrl must be an http(s) URL, got ${JSON.stringify(opts.url)}`);
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') {
      throw new ConfigError(`k8s.kubeletUrl must use http or https, got ${JSON.stringify(opts.url)}`);
    }
    for (const [key, v, min] of [
      ['timeout', opts.timeoutMs, 1],
      ['pollInterval', opts.pollIntervalMs, 0],
      ['maxPollAttempts', opts.maxPollAttempts, 1],
    ] as const) {
      if (!(Number.isFinite(v) && v >= min)) throw new ConfigError(`k8s.${key} must be at least ${min}, got ${v}`);
    }
    this.opts = opts;
    this.podsUrl = new URL(`${base.pathname.replace(/\/+$/, '')}/pods`, base);
    if (base.protocol === 'https:') {
      let ca: Buffer | undefined;
      if (opts.caFile) {
        try {
          ca = readFileSync(opts.caFile);
        } catch (err) {
          throw new ConfigError(`k8s.caFile ${opts.caFile}: cannot read the file (${(err as Error).message})`);
        }
      }
      this.agent = new https.Agent({ keepAlive: true, ca, rejectUnauthorized: !opts.skipVerify });
      this.request = https.request;
    } else {
      this.agent = new http.Agent({ keepAlive: true });
      this.request = http.request;
    }
  }

  /** Kubelet requests sent so far (for tests and metrics). */
  get fetches(): number {
    return this.fetchCount;
  }

  /** The last successfully fetched list, if any. */
  get lastList(): PodListIndex | undefined {
    return this.kept;
  }

  /**
   * Resolves with find(list) for the first list where it is defined. The first attempt reuses a
   * list fetched less than a poll interval ago; each further attempt waits for a list newer than
   * the one it saw, fetched no sooner than a poll interval after the previous fetch started.
   * Rejects with KubeletError: 'not-found' ("<what> not found in kubelet pod list after N
   * attempts") or the failure of the fetch that was waited on.
   */
  async waitFor<T>(find: (list: PodListIndex) => T | undefined, what: string): Promise<T> {
    if (this.opts.shareFetches === false) return this.waitForOwnFetches(find, what);
    const kept = this.kept;
    let seen = kept === undefined ? 0 : performance.now() - kept.startedAt < this.opts.pollIntervalMs ? kept.gen - 1 : kept.gen;
    for (let attempt = 1; ; attempt++) {
      const list = await this.listNewerThan(seen);
      const found = find(list);
      if (found !== undefined) return found;
      if (attempt >= this.opts.maxPollAttempts) {
        throw new KubeletError('not-found', `${what} not found in kubelet pod list after ${attempt} attempts`);
      }
      seen = list.gen;
    }
  }

  /**
   * The unshared behaviour of older agents: each attempt is its own GET /pods and its own parse of
   * the whole document, attempts of one attestation spaced by the poll interval. Concurrent
   * attestations each hold a full copy while they parse: the memory spike the brief describes.
   */
  private async waitForOwnFetches<T>(find: (list: PodListIndex) => T | undefined, what: string): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      if (this.closed) throw new KubeletError('closed', 'kubelet client closed');
      const startedAt = performance.now();
      this.fetchCount++;
      let list: PodListIndex;
      try {
        const { pods, bytes } = await this.get();
        this.opts.onFetch?.('ok', bytes);
        list = indexPods(pods, ++this.gen, startedAt, bytes, this.opts.listWorkingSetBytes ?? 0);
      } catch (err) {
        this.opts.onFetch?.('error', 0);
        throw err;
      }
      const found = find(list);
      if (found !== undefined) return found;
      if (attempt >= this.opts.maxPollAttempts) {
        throw new KubeletError('not-found', `${what} not found in kubelet pod list after ${attempt} attempts`);
      }
      const wait = startedAt + this.opts.pollIntervalMs - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  }

  /** Stops polling: waiting callers and the request in flight fail with reason 'closed'. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.scheduled) {
      clearTimeout(this.scheduled.timer);
      this.scheduled.reject(new KubeletError('closed', 'kubelet client closed'));
      this.scheduled = undefined;
    }
    this.agent.destroy();
  }

  private listNewerThan(gen: number): Promise<PodListIndex> {
    if (this.closed) return Promise.reject(new KubeletError('closed', 'kubelet client closed'));
    if (this.kept !== undefined && this.kept.gen > gen) return Promise.resolve(this.kept);
    if (this.inflight) return this.inflight;
    const wait = this.lastStartAt + this.opts.pollIntervalMs - performance.now();
    if (wait <= 0) return this.fetchNow();
    if (!this.scheduled) {
      let resolve!: (l: PodListIndex) => void;
      let reject!: (e: Error) => void;
      const promise = new Promise<PodListIndex>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      // Waiters share the outcome; this guard only keeps a promise nobody awaits any more quiet.
      promise.catch(() => {});
      const timer = setTimeout(() => {
        this.scheduled = undefined;
        this.fetchNow().then(resolve, reject);
      }, Math.ceil(wait));
      this.scheduled = { promise, timer, reject };
    }
    return this.scheduled.promise;
  }

  private fetchNow(): Promise<PodListIndex> {
    this.lastStartAt = performance.now();
    const startedAt = this.lastStartAt;
    this.fetchCount++;
    const p = this.get().then(
      ({ pods, bytes }) => {
        // Cleared before publishing so no caller can join a request whose list it has already seen.
        this.inflight = undefined;
        this.kept = indexPods(pods, ++this.gen, startedAt, bytes, this.opts.listWorkingSetBytes ?? 0);
        this.opts.onFetch?.('ok', bytes);
        return this.kept;
      },
      (err: unknown) => {
        this.inflight = undefined;
        this.opts.onFetch?.('error', 0);
        throw err;
      },
    );
    p.catch(() => {});
    this.inflight = p;
    return p;
  }

  private async bearerToken(): Promise<string | undefined> {
    if (!this.opts.tokenFile) return undefined;
    // Re-read on every fetch (at most one per poll interval): projected service-account tokens
    // rotate, and a stale token would fail every attestation until restart.
    try {
      return (await readFile(this.opts.tokenFile, 'utf8')).trim();
    } catch (err) {
      throw new KubeletError('token', `cannot read the kubelet token file ${this.opts.tokenFile}: ${(err as Error).message}`, { cause: err });
    }
  }

  private async get(): Promise<{ pods: KubePod[]; bytes: number }> {
    const token = await this.bearerToken();
    const url = this.podsUrl.href;
    const maxBody = this.opts.maxBodyBytes ?? 256 * 2 ** 20;
    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = (err: Error | null, value?: { pods: KubePod[]; bytes: number }) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (err) reject(err);
        else resolve(value!);
      };
      const headers: Record<string, string> = { accept: 'application/json' };
      if (token) headers.authorization = `Bearer ${token}`;
      let req: http.ClientRequest;
      try {
        req = this.request(this.podsUrl, { method: 'GET', headers, agent: this.agent }, onResponse);
      } catch (err) {
        // Thrown synchronously for headers Node refuses, e.g. a token file with a line break inside.
        reject(new KubeletError('token', `kubelet GET ${url}: cannot send the request: ${(err as Error).message}`, { cause: err }));
        return;
      }
      function onResponse(res: http.IncomingMessage) {
        res.on('error', (err) => settle(new KubeletError('unreachable', `kubelet GET ${url}: response failed: ${err.message}`, { cause: err })));
        if (res.statusCode !== 200) {
          let snippet = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => {
            if (snippet.length < 200) snippet += c;
          });
          res.on('end', () => settle(new KubeletError('status', `kubelet GET ${url} answered HTTP ${res.statusCode}: ${snippet.slice(0, 200).trim()}`)));
          return;
        }
        const chunks: Buffer[] = [];
        let bytes = 0;
        res.on('data', (c: Buffer) => {
          bytes += c.length;
          if (bytes > maxBody) {
            req.destroy();
            settle(new KubeletError('invalid-response', `kubelet GET ${url}: response larger than ${maxBody} bytes`));
            return;
          }
          chunks.push(c);
        });
        res.on('end', () => {
          try {
            settle(null, { pods: parsePodList(Buffer.concat(chunks, bytes).toString('utf8'), url), bytes });
          } catch (err) {
            settle(err as Error);
          }
        });
      }
      const timer = setTimeout(() => {
        settle(new KubeletError('timeout', `kubelet GET ${url} timed out after ${this.opts.timeoutMs} ms`));
        req.destroy();
      }, this.opts.timeoutMs);
      req.on('error', (err) => {
        const reason = this.closed ? 'closed' : 'unreachable';
        settle(new KubeletError(reason, `kubelet GET ${url} failed: ${err.message}`, { cause: err }));
      });
      req.end();
    });
  }
}

function parsePodList(text: string, url: string): KubePod[] {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new KubeletError('invalid-response', `kubelet GET ${url}: body is not JSON (${(err as Error).message})`);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new KubeletError('invalid-response', `kubelet GET ${url}: body is not a PodList object`);
  }
  const items = (body as { items?: unknown }).items;
  // A kubelet omits "items" when no pods run; anything else must be an array of pods.
  if (items === undefined || items === null) return [];
  if (!Array.isArray(items)) throw new KubeletError('invalid-response', `kubelet GET ${url}: "items" is not an array`);
  return items.filter((p): p is KubePod => typeof p === 'object' && p !== null && typeof (p as KubePod).metadata?.uid === 'string');
}

function containerKey(containerID: string): string {
  const at = containerID.lastIndexOf('://');
  return at < 0 ? containerID : containerID.slice(at + 3);
}

const PAGE = 4096;

function touchedBuffer(bytes: number): Buffer | null {
  if (bytes <= 0) return null;
  const b = Buffer.allocUnsafe(bytes);
  for (let i = 0; i < bytes; i += PAGE) b[i] = 1;
  return b;
}

function indexPods(pods: KubePod[], gen: number, startedAt: number, bytes: number, workingSetBytes: number): PodListIndex {
  const byUid = new Map<string, KubePod>();
  const byContainerId = new Map<string, PodContainer>();
  for (const pod of pods) {
    byUid.set(pod.metadata.uid, pod);
    const s = pod.status;
    if (!s) continue;
    for (const [list, init] of [
      [s.containerStatuses, false],
      [s.initContainerStatuses, true],
      [s.ephemeralContainerStatuses, false],
    ] as const) {
      if (!Array.isArray(list)) continue;
      for (const status of list) {
        if (status?.containerID) byContainerId.set(containerKey(status.containerID), { pod, status, init });
      }
    }
  }
  return { gen, startedAt, bytes, pods, byUid, byContainerId, workingSet: touchedBuffer(workingSetBytes) };
}

export function createKubeletClient(opts: KubeletClientOptions): KubeletClient {
  return new KubeletClient(opts);
}
