// Runs inside a generator pod: the project's pod process (which forks M workers) plus a small HTTP
// endpoint the runner reaches through the API server's pod proxy. The pod waits paused until the
// runner releases every pod together (POST go-<t0>-<endAt>), keeps every part of a second its pod
// process forwarded, and serves them by index with the last second complete (GET parts-from-<i>), and
// a final dump (GET final); GET probe makes one real call to
// the agent from inside the pod (fault recovery). Paths are single segments: the
// client URL-encodes the proxied path, so neither "/" nor "?" may appear in it.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { probeAgentOnce } from '../../fault/index.js';
import { waitForSvid } from './svid-probe.js';
import { jsonSender, podRequestPath } from './pod-http.js';
import {
  loadBundles,
  PodHandle,
  podConfigFor,
  WORKER_NICE,
  validateLoadOptions,
  podStartTimeoutMs,
  type IntervalData,
  type LoadBundles,
  type LoadOptions,
  type ResolvedLoadOptions,
} from '../../load/index.js';

export interface GeneratorOptions {
  load: Omit<LoadOptions, 'pods' | 'durationMs' | 'maxCalls'>;
  port: number;
  host?: string;
  /** The pod's name, reported back (the runner keys pods by it). */
  podName: string;
  /** Report ready only after one FetchJWTSVID succeeded on the socket (SPIRE: the entry has arrived). */
  probe?: { timeoutMs: number };
  /** Log lines (stdout in a pod). */
  log?: (line: string) => void;
}

export interface GeneratorFinal {
  pod: string;
  ready: boolean;
  released: boolean;
  finished: boolean;
  calls: number;
  cpuMs: number;
  workerPids: number[];
  /** Parts of seconds forwarded by the pod process (a second can come in several parts). */
  parts: number;
  /** Its workers' longest time without a successful call (worker-side), once the pod process is done; null before. */
  longestOkGapMs: number | null;
  failure: string | null;
  /** The workers' client as it runs here (h2 where the image has no native worker and no compiler), and why it differs. */
  client?: string;
  clientFallback?: string;
}

/** GET parts-from-<i>: what the runner's collector pulls. */
export interface GeneratorParts {
  pod: string;
  finished: boolean;
  parts: IntervalData[];
  next: number;
  complete: number;
}

export interface RunningGenerator {
  url: string;
  /** Resolves when the pod process has finished (after the release and the end time, or a stop). */
  finished: Promise<void>;
  final(): GeneratorFinal;
  close(): Promise<void>;
}

export async function startGenerator(opts: GeneratorOptions): Promise<RunningGenerator> {
  // durationMs only bounds validation here: the real end comes with the release.
  const load = validateLoadOptions({ ...opts.load, pods: 1, durationMs: 100 });
  const bundles = await loadBundles(load.client);
  const log = opts.log ?? ((l: string) => process.stdout.write(`${l}\n`));
  // The project's image carries the native worker built ahead of time; an image without it (and without
  // a compiler) runs native as h2, said here and in every dump.
  if (bundles.fallback) log(JSON.stringify({ event: 'client-fallback', pod: opts.podName, message: bundles.fallback }));
  const gen = new GeneratorPod(opts.podName, load, bundles, opts.probe, log);
  const server: Server = createServer(generatorRoutes(gen, load.socket));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '0.0.0.0', resolve);
  });
  const port = (server.address() as AddressInfo).port;
  void gen.handle.finished.then(() => log(JSON.stringify({ event: 'final', ...gen.final() })));

  return {
    url: `http://${opts.host ?? '127.0.0.1'}:${port}`,
    finished: gen.handle.finished,
    final: () => gen.final(),
    async close() {
      await gen.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The pod process with its workers, and what the runner asks of it: every part of a second it
 * forwarded, how far its seconds are complete, whether it is ready (and probed), released, done.
 */
class GeneratorPod {
  readonly handle: PodHandle;
  readonly #child: ChildProcess;
  readonly podName: string;
  readonly #bundles: LoadBundles;
  readonly #log: (line: string) => void;
  readonly #parts: IntervalData[] = [];
  /** The last second every worker has shipped all of (the pod process's progress). */
  #complete = -1;
  #lastSecond = -1;
  #released = false;
  // Without a probe the pod is ready when its workers are; with one, also once an SVID was fetched.
  #probed: boolean;
  #probeFailure: string | null = null;

  constructor(podName: string, load: ResolvedLoadOptions, bundles: LoadBundles, probe: GeneratorOptions['probe'], log: (line: string) => void) {
    this.podName = podName;
    this.#bundles = bundles;
    this.#log = log;
    const startTimeoutMs = podStartTimeoutMs(load.workersPerPod, load.workersPerPod);
    // Bounded by time alone: the runner releases and ends the load.
    // The generator container is the pod's cgroup: its workers yield to this server and the pod process.
    // The client that runs (h2 where native fell back), so the pod process starts the bundle it was given.
    const podConfig = { ...podConfigFor({ ...load, client: bundles.client }, bundles.worker, startTimeoutMs, null), workerNice: WORKER_NICE };
    this.#child = spawn(process.execPath, [bundles.pod, JSON.stringify(podConfig)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.handle = new PodHandle(
      { uid: podName, name: podName },
      this.#child,
      startTimeoutMs,
      (_p, data) => {
        this.#parts.push(data);
        this.#lastSecond = Math.max(this.#lastSecond, data.second);
      },
      (second) => void (this.#complete = Math.max(this.#complete, second)),
    );
    this.#probed = !probe;
    if (probe) {
      void waitForSvid(load.socket, load.audience, { timeoutMs: probe.timeoutMs, stopped: () => this.handle.isFinished }).then((failure) => {
        this.#probed = failure === null;
        this.#probeFailure = failure;
        log(JSON.stringify({ event: 'svid-probe', pod: podName, ok: this.#probed, ...(failure ? { failure } : {}) }));
      });
    }
    this.handle.ready.then(
      (pids) => log(JSON.stringify({ event: 'ready', pod: podName, workers: pids.length })),
      (err: Error) => log(JSON.stringify({ event: 'failed', pod: podName, message: err.message })),
    );
  }

  isReady(): boolean {
    return this.handle.isReady && this.#probed;
  }

  final(): GeneratorFinal {
    const handle = this.handle;
    return {
      pod: this.podName,
      ready: this.isReady(),
      released: this.#released,
      finished: handle.isFinished,
      calls: handle.calls,
      cpuMs: handle.cpuMs,
      workerPids: handle.workerPids,
      parts: this.#parts.length,
      longestOkGapMs: handle.longestOkGapMs,
      failure: handle.failure?.message ?? (this.#probeFailure ? `no SVID within the probe time: ${this.#probeFailure}` : null),
      client: this.#bundles.client,
      ...(this.#bundles.fallback ? { clientFallback: this.#bundles.fallback } : {}),
    };
  }

  /**
   * Parts from index `from` on; `next` is the index to ask from next time. A second is whole once
   * `complete` has reached it: until then more parts of it may come (a worker starved of CPU).
   */
  partsFrom(from: number): GeneratorParts {
    const finished = this.handle.isFinished;
    const complete = this.#complete;
    return {
      pod: this.podName,
      finished,
      parts: this.#parts.slice(from),
      next: this.#parts.length,
      complete: finished ? Math.max(complete, this.#lastSecond) : complete,
    };
  }

  /** Tells the pod process go, once. */
  release(t0: number, endAt: number): void {
    if (this.#released) return;
    this.#released = true;
    this.handle.go({ type: 'go', t0, endAt });
    this.#log(JSON.stringify({ event: 'released', pod: this.podName, t0, endAt }));
  }

  /** Stops the workers, then the pod process: SIGTERM, SIGKILL after 3 s. */
  async close(): Promise<void> {
    const child = this.#child;
    this.handle.stop();
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 3000);
      await this.handle.finished;
      clearTimeout(t);
    }
  }
}

/** The endpoints the runner calls through the pod proxy (single-segment paths, see the top). */
function generatorRoutes(gen: GeneratorPod, socket: string): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const path = podRequestPath(req);
    const send = jsonSender(res);
    let m: RegExpExecArray | null;
    if (req.method === 'GET' && path === 'ready') return send(gen.isReady() ? 200 : 503, gen.final());
    if (req.method === 'GET' && path === 'final') return send(200, gen.final());
    // One real Workload API call from inside the pod: does the agent answer? (fault recovery in a cluster)
    if (req.method === 'GET' && path === 'probe') {
      void probeAgentOnce(socket, 2000).then((answered) => send(200, { pod: gen.podName, answered }));
      return;
    }
    if (req.method === 'GET' && (m = /^parts-from-(\d+)$/.exec(path))) return send(200, gen.partsFrom(Number(m[1])));
    if (req.method === 'POST' && (m = /^go-(\d+)-(\d+)$/.exec(path))) {
      if (!gen.isReady()) return send(409, { error: 'workers are not ready yet' });
      gen.release(Number(m[1]), Number(m[2]));
      return send(200, gen.final());
    }
    if (req.method === 'POST' && path === 'stop') {
      gen.handle.stop();
      return send(200, gen.final());
    }
    send(404, { error: `no such endpoint: ${req.method} ${path}` });
  };
}
