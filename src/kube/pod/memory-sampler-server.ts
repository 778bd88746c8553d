// Runs inside the memory-sampler pod (clusters that are not kind on this host): reads the agent
// container's memory cgroup every 100 ms on the agent's node and keeps the readings, which the
// runner pulls through the API server's pod proxy as it pulls the generators' seconds. The runner
// names the container to follow (POST target-<podUid>-<containerID>) from its watch of the agent
// pod, again after every restart. Paths are single segments (see generator-server.ts).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NodeCgroupReader } from './node-cgroup-reader.js';
import { jsonSender, podRequestPath } from './pod-http.js';

export interface MemoryReading {
  /** Index of the reading (pull from here). */
  i: number;
  /** Epoch ms on the node. */
  at: number;
  usageBytes: number;
  /** usage − inactive file pages; null when memory.stat was unreadable, absent from an older sampler image. */
  workingSetBytes?: number | null;
  /** Anonymous memory charged to the container (memory.stat); null or absent as workingSetBytes. */
  rssBytes?: number | null;
  /** The highest high-water mark of any container followed so far (memory.peak / max_usage, or the readings' maximum). */
  peakBytes: number;
  limitBytes: number | null;
  cpuSeconds: number | null;
  oomKills: number;
  /** As the contract's memory sample (absent from an older sampler image). */
  limitHits?: number | null;
  stallSomeUs?: number | null;
  stallFullUs?: number | null;
}

export interface MemorySamplerOptions {
  cgroupRoot: string;
  port: number;
  host?: string;
  intervalMs?: number;
  /** Readings kept (the runner pulls every second; older ones are dropped). */
  keep?: number;
  log?: (line: string) => void;
}

export interface RunningMemorySampler {
  url: string;
  close(): Promise<void>;
}

export async function startMemorySampler(opts: MemorySamplerOptions): Promise<RunningMemorySampler> {
  const reader = new NodeCgroupReader(opts.cgroupRoot);
  const log = opts.log ?? ((l: string) => process.stdout.write(`${l}\n`));
  const keep = opts.keep ?? 6000;
  const readings: MemoryReading[] = [];
  let next = 0;
  let peak = 0;
  let failures = 0;
  let lastDir: string | null = null;
  const timer = setInterval(() => {
    const r = reader.read();
    if (!r) {
      if (reader.target) failures++;
      return;
    }
    if (r.dir !== lastDir) log(JSON.stringify({ event: 'resolved', dir: r.dir }));
    lastDir = r.dir;
    peak = Math.max(peak, r.peakBytes ?? r.usageBytes, r.usageBytes);
    readings.push({
      i: next++,
      at: Date.now(),
      usageBytes: r.usageBytes,
      workingSetBytes: r.workingSetBytes,
      rssBytes: r.rssBytes,
      peakBytes: peak,
      limitBytes: r.limitBytes,
      cpuSeconds: r.cpuSeconds,
      oomKills: r.oomKills,
      limitHits: r.limitHits,
      ...(r.stallMicros ? { stallSomeUs: r.stallMicros.some, stallFullUs: r.stallMicros.full } : {}),
    });
    if (readings.length > keep) readings.splice(0, readings.length - keep);
  }, opts.intervalMs ?? 100);

  const server: Server = createServer((req, res) => {
    const path = podRequestPath(req);
    const send = jsonSender(res);
    let m: RegExpExecArray | null;
    if (req.method === 'GET' && path === 'ready') return send(200, { flavour: reader.flavour, target: reader.target });
    if (req.method === 'POST' && (m = /^target-([0-9a-f-]{36})-(?:[a-z0-9-]+:)?([0-9a-f]{64})$/.exec(path))) {
      reader.setTarget(m[1]!, m[2]!);
      log(JSON.stringify({ event: 'target', podUid: m[1], containerID: m[2] }));
      return send(200, { target: reader.target });
    }
    if (req.method === 'GET' && (m = /^readings-from-(\d+)$/.exec(path))) {
      const from = Number(m[1]);
      return send(200, { readings: readings.filter((r) => r.i >= from), failures, dir: lastDir, flavour: reader.flavour });
    }
    send(404, { error: `no such endpoint: ${req.method} ${path}` });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '0.0.0.0', resolve);
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${opts.host ?? '127.0.0.1'}:${port}`,
    async close() {
      clearInterval(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
