// FAKE kubelet for tests: a real HTTP(S) server on 127.0.0.1 serving GET /pods from a pod list the
// test controls (a real kubelet cannot run here). Records every request it receives.
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { KubePod } from '../../src/agent/kubelet-client.js';

export interface FakeKubeletRequest {
  at: number;
  path: string;
  authorization: string | undefined;
}

export interface FakeKubelet {
  url: string;
  pods: KubePod[];
  requests: FakeKubeletRequest[];
  /** Replaces the default handler (serve `pods` as a PodList). */
  handler?: (req: IncomingMessage, res: ServerResponse) => void;
  /** Delay before answering, ms. */
  delayMs: number;
  /** When set, requests without "Bearer <token>" get 401. */
  requireToken?: string;
  close(): Promise<void>;
}

export async function startFakeKubelet(tls?: { key: Buffer; cert: Buffer }): Promise<FakeKubelet> {
  const fk = {
    pods: [] as KubePod[],
    requests: [] as FakeKubeletRequest[],
    delayMs: 0,
  } as unknown as FakeKubelet;
  const timers = new Set<NodeJS.Timeout>();
  const serve = (req: IncomingMessage, res: ServerResponse) => {
    fk.requests.push({ at: performance.now(), path: req.url ?? '', authorization: req.headers.authorization });
    const answer = () => {
      if (fk.handler) return fk.handler(req, res);
      if (req.url !== '/pods') {
        res.writeHead(404).end('404 page not found');
        return;
      }
      if (fk.requireToken && req.headers.authorization !== `Bearer ${fk.requireToken}`) {
        res.writeHead(401).end('Unauthorized');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items: fk.pods }));
    };
    if (fk.delayMs > 0) {
      const t = setTimeout(() => {
        timers.delete(t);
        answer();
      }, fk.delayMs);
      timers.add(t);
    } else answer();
  };
  const server: Server = tls ? createHttpsServer(tls, serve) : createHttpServer(serve);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  fk.url = `${tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  fk.close = () =>
    new Promise<void>((resolve) => {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return fk;
}

/** A pod as a kubelet lists it, with one container per (name, image, containerID). */
export function makePod(opts: {
  uid: string;
  name?: string;
  namespace?: string;
  serviceAccount?: string;
  nodeName?: string;
  labels?: Record<string, string>;
  owners?: { kind: string; name: string; uid: string }[];
  containers?: { name: string; image: string; imageID?: string; containerID?: string }[];
  initContainers?: { name: string; image: string; imageID?: string; containerID?: string }[];
}): KubePod {
  return {
    metadata: {
      name: opts.name ?? 'pod',
      namespace: opts.namespace ?? 'default',
      uid: opts.uid,
      labels: opts.labels,
      ownerReferences: opts.owners,
    },
    spec: { serviceAccountName: opts.serviceAccount ?? 'default', nodeName: opts.nodeName ?? 'node-1' },
    status: { containerStatuses: opts.containers ?? [], initContainerStatuses: opts.initContainers },
  };
}
