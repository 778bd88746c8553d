// Runs inside a generator pod: the project's pod process (which forks M workers) plus a small HTTP
// endpoint the runner reaches through the API server's pod proxy. The pod waits paused until the
// runner releases every pod together (POST go-<t0>-<endAt>), keeps every part of a second its pod
// process forwarded, and serves them by index with the last second complete (GET parts-from-<i>), and
// a final dump (GET final); GET probe makes one real call to
// the agent from inside the pod (fault recovery). Paths are single segments: the
// client URL-encodes the proxied path, so neither "/" nor "?" may appear in it.
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { probeAgentOnce } from '../fault/index.js';
import { waitForSvid } from './svid-probe.js';
import { jsonSender, podRequestPath } from './pod-http.js';
import { loadBundles, PodHandle, podConfigFor, WORKER_NICE, validateLoadOptions, podStartTimeoutMs, type IntervalData, type LoadOptions } from '../load/index.js';

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
  /** The workers' client as it runs here (h2 where native could not be built in the image), and why it differs. */
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
  // The image may have no C compiler: the native client then runs as h2, said here and in every dump.
  if (bundles.fallback) log(JSON.stringify({ event: 'client-fallback', pod: opts.podName, message: bundles.fallback }));
  const startTimeoutMs = podStartTimeoutMs(load.workersPerPod, load.workersPerPod);
  // Bounded by time alone: the runner releases and ends the load.
  // The generator container is the pod's cgroup: its workers yield to this server and the pod process.
  // The client that runs (h2 where native fell back), so the pod process starts the bundle it was given.
  const podConfig = { ...podConfigFor({ ...load, client: bundles.client }, bundles.worker, startTimeoutMs, null), workerNice: WORKER_NICE };
  const parts: IntervalData[] = [];
  /** The last second every worker has shipped all of (the pod process's progress). */
  let complete = -1;
  let lastSecond = -1;
  const child = spawn(process.execPath, [bundles.pod, JSON.stringify(podConfig)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const pod = { uid: opts.podName, name: opts.podName };
  const handle = new PodHandle(
    pod,
    child,
    startTimeoutMs,
    (_p, data) => {
      parts.push(data);
      lastSecond = Math.max(lastSecond, data.second);
    },
    (second) => void (complete = Math.max(complete, second)),
  );
  let released = false;
  // Without a probe the pod is ready when its workers are; with one, also once an SVID was fetched.
  let probed = !opts.probe;
  let probeFailure: string | null = null;
  if (opts.probe) {
    void waitForSvid(load.socket, load.audience, { timeoutMs: opts.probe.timeoutMs, stopped: () => handle.isFinished }).then((failure) => {
      probed = failure === null;
      probeFailure = failure;
      log(JSON.stringify({ event: 'svid-probe', pod: opts.podName, ok: probed, ...(failure ? { failure } : {}) }));
    });
  }
  const isReady = () => handle.isReady && probed;
  handle.ready.then(
    (pids) => log(JSON.stringify({ event: 'ready', pod: opts.podName, workers: pids.length })),
    (err: Error) => log(JSON.stringify({ event: 'failed', pod: opts.podName, message: err.message })),
  );

  const final = (): GeneratorFinal => ({
    pod: opts.podName,
    ready: isReady(),
    released,
    finished: handle.isFinished,
    calls: handle.calls,
    cpuMs: handle.cpuMs,
    workerPids: handle.workerPids,
    parts: parts.length,
    longestOkGapMs: handle.longestOkGapMs,
    failure: handle.failure?.message ?? (probeFailure ? `no SVID within the probe time: ${probeFailure}` : null),
    client: bundles.client,
    ...(bundles.fallback ? { clientFallback: bundles.fallback } : {}),
  });

  const server: Server = createServer((req, res) => {
    const path = podRequestPath(req);
    const send = jsonSender(res);
    let m: RegExpExecArray | null;
    if (req.method === 'GET' && path === 'ready') return send(isReady() ? 200 : 503, final());
    if (req.method === 'GET' && path === 'final') return send(200, final());
    // One real Workload API call from inside the pod: does the agent answer? (fault recovery in a cluster)
    if (req.method === 'GET' && path === 'probe') {
      void probeAgentOnce(load.socket, 2000).then((answered) => send(200, { pod: opts.podName, answered }));
      return;
    }
    // Parts from index i on; `next` is the index to ask from next time. A second is whole once
    // `complete` has reached it: until then more parts of it may come (a worker starved of CPU).
    if (req.method === 'GET' && (m = /^parts-from-(\d+)$/.exec(path))) {
      const finished = handle.isFinished;
      return send(200, { pod: opts.podName, finished, parts: parts.slice(Number(m[1])), next: parts.length, complete: finished ? Math.max(complete, lastSecond) : complete } satisfies GeneratorParts);
    }
    if (req.method === 'POST' && (m = /^go-(\d+)-(\d+)$/.exec(path))) {
      if (!isReady()) return send(409, { error: 'workers are not ready yet' });
      if (!released) {
        released = true;
        handle.go({ type: 'go', t0: Number(m[1]), endAt: Number(m[2]) });
        log(JSON.stringify({ event: 'released', pod: opts.podName, t0: Number(m[1]), endAt: Number(m[2]) }));
      }
      return send(200, final());
    }
    if (req.method === 'POST' && path === 'stop') {
      handle.stop();
      return send(200, final());
    }
    send(404, { error: `no such endpoint: ${req.method} ${path}` });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '0.0.0.0', resolve);
  });
  const port = (server.address() as AddressInfo).port;
  void handle.finished.then(() => log(JSON.stringify({ event: 'final', ...final() })));

  return {
    url: `http://${opts.host ?? '127.0.0.1'}:${port}`,
    finished: handle.finished,
    final,
    async close() {
      handle.stop();
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 3000);
        await handle.finished;
        clearTimeout(t);
      }
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
