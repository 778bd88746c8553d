// A FAKE Kubernetes API server for the kind-mode tests (no cluster can run on this machine). It is a
// real HTTP server on loopback that speaks the endpoints @kubernetes/client-node 1.4 calls: API
// discovery, server-side apply (PATCH application/apply-patch+yaml), lists with label selectors,
// the watch event stream (one JSON event per line), pod logs, pod proxy (forwarded to a real local
// endpoint per pod), namespace and ClusterRole deletion. It plays the kubelet's part only as far as
// the tests tell it: an applied DaemonSet gets one pod (and a new one, with a new UID, when that pod is
// deleted, as its controller would), applied pods start running, a pod's `resize` subresource takes a
// strategic merge patch of container resources; the tests then change container statuses (OOMKilled,
// Error/137, restarts) and the watch delivers them. Every request is recorded with its time.
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { generateServingCert, type ServingCert } from '../../src/sandbox/self-signed.js';

type Obj = Record<string, any>;

/** The fake's one node, as a single-node cluster has it. */
const FAKE_NODE = 'fake-control-plane';
const FAKE_NODE_LABELS: Record<string, string> = { 'kubernetes.io/hostname': FAKE_NODE, 'kubernetes.io/os': 'linux' };

const RESOURCES: Record<string, Array<{ name: string; kind: string; namespaced: boolean }>> = {
  '/api/v1': [
    { name: 'namespaces', kind: 'Namespace', namespaced: false },
    { name: 'nodes', kind: 'Node', namespaced: false },
    { name: 'pods', kind: 'Pod', namespaced: true },
    { name: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true },
    { name: 'configmaps', kind: 'ConfigMap', namespaced: true },
    { name: 'services', kind: 'Service', namespaced: true },
  ],
  '/apis/apps/v1': [
    { name: 'daemonsets', kind: 'DaemonSet', namespaced: true },
    { name: 'deployments', kind: 'Deployment', namespaced: true },
  ],
  '/apis/rbac.authorization.k8s.io/v1': [
    { name: 'clusterroles', kind: 'ClusterRole', namespaced: false },
    { name: 'clusterrolebindings', kind: 'ClusterRoleBinding', namespaced: false },
    { name: 'roles', kind: 'Role', namespaced: true },
    { name: 'rolebindings', kind: 'RoleBinding', namespaced: true },
  ],
};

export interface ApplyRecord {
  path: string;
  contentType: string;
  fieldManager: string | null;
  force: string | null;
  kind: string;
  name: string;
}

export interface FakeApiServerOptions {
  /** Images listed in the node's status (what `kind load` put there): one entry's names each (tag and digest names). */
  nodeImages?: Array<string | string[]>;
  /** The node's status lists nodeImages only this long after start, as a kubelet reports an image `kind load` just put there with its next status update. */
  nodeImagesAfterMs?: number;
  /** UID given to the agent pod the fake creates for the agent DaemonSet. */
  agentPodUid?: string;
  /** The agent container's state when it is created: running and ready, or stuck pulling its image. */
  agentStart?: 'ready' | 'image-pull-backoff';
  /** gitVersion /version reports (default v1.31.0-fake). */
  version?: string;
  /** Serve the pod resize subresource (Kubernetes >= 1.33); false: 404 as older API servers answer. */
  resize?: boolean;
  /** Paths (lowercase) whose DELETE is refused with this status, as RBAC or an admission webhook would. */
  refuseDeletes?: Record<string, number>;
}

export interface TimedRequest {
  at: number;
  method: string;
  path: string;
  query: Record<string, string>;
  contentType: string;
  body: unknown;
}

export class FakeApiServer {
  readonly applies: ApplyRecord[] = [];
  readonly deleted: string[] = [];
  readonly requests: string[] = [];
  /** Every DELETE and PATCH with its time, query and body. */
  readonly changes: TimedRequest[] = [];
  /** path (lowercase, without query) → object */
  readonly objects = new Map<string, Obj>();
  /** pod "ns/name" → base URL its proxy forwards to */
  readonly proxies = new Map<string, string>();
  /** Socket janitor pods as they started: where, and which directories they were told to remove. */
  readonly janitors: Array<{ at: number; namespace: string; node: string; env: Record<string, string>; hostPath: string }> = [];
  /** pod "ns/name/container[/previous]" → log text */
  readonly logs = new Map<string, string>();
  #server!: Server;
  #cert!: ServingCert;
  #watchers = new Set<{ ns: string; selector: Record<string, string>; res: ServerResponse }>();
  #rv = 1;
  #replacements = 1;
  #opts: FakeApiServerOptions;
  #startedAt: number | null = null;
  url = '';

  constructor(opts: FakeApiServerOptions = {}) {
    this.#opts = opts;
  }

  /** Serves HTTPS like a real API server (client-node refuses plain HTTP without skipTLSVerify). */
  async start(): Promise<this> {
    this.#cert = await generateServingCert('127.0.0.1', 'fake-control-plane');
    this.#server = createServer(
      { cert: this.#cert.certPem, key: this.#cert.keyPem },
      (req, res) => void this.#handle(req, res).catch((err) => this.#send(res, 500, status(500, String(err)))),
    );
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.#startedAt = Date.now();
    this.url = `https://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    for (const w of this.#watchers) w.res.end();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** Writes a kubeconfig whose context `context` points at this server. */
  writeKubeconfig(file: string, context = 'kind-fake'): string {
    writeFileSync(
      file,
      `apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster:
    server: ${this.url}
    certificate-authority-data: ${Buffer.from(this.#cert.certPem).toString('base64')}
users:
- name: fake
  user:
    token: fake-token
contexts:
- name: ${context}
  context:
    cluster: fake
    user: fake
current-context: ${context}
`,
    );
    return file;
  }

  pods(ns: string): Obj[] {
    return [...this.objects.entries()].filter(([p]) => p.startsWith(`/api/v1/namespaces/${ns}/pods/`)).map(([, o]) => o);
  }

  agentPod(ns: string): Obj | undefined {
    return this.pods(ns).find((p) => p.metadata.labels?.['attestorm.dev/role'] === 'agent');
  }

  /** Changes the agent container's status (as the kubelet would) and sends the watch event. */
  updateAgent(ns: string, fn: (containerStatus: Obj, pod: Obj) => void): void {
    const pod = this.agentPod(ns);
    if (!pod) throw new Error(`fake: no agent pod in ${ns}`);
    fn(pod.status.containerStatuses[0], pod);
    pod.metadata.resourceVersion = String(++this.#rv);
    this.#notify('MODIFIED', pod);
  }

  #send(res: ServerResponse, code: number, body: unknown, type = 'application/json'): void {
    res.writeHead(code, { 'content-type': type });
    res.end(typeof body === 'string' && type !== 'application/json' ? body : JSON.stringify(body));
  }

  #notify(type: string, pod: Obj): void {
    for (const w of this.#watchers) {
      if (pod.metadata.namespace === w.ns && matches(pod, w.selector)) w.res.write(`${JSON.stringify({ type, object: pod })}\n`);
    }
  }

  #list(prefix: string, selector: Record<string, string>, kind: string): Obj {
    const items = [...this.objects.entries()]
      .filter(([p]) => p.startsWith(prefix) && p.slice(prefix.length).split('/').length === 1)
      .map(([, o]) => o)
      .filter((o) => matches(o, selector));
    return { apiVersion: 'v1', kind: `${kind}List`, metadata: { resourceVersion: String(this.#rv) }, items };
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    // The API server decodes the path (client-node encodes `name:port` as name%3Aport).
    const path = decodeURIComponent(url.pathname).replace(/\/$/, '');
    const q = url.searchParams;
    this.requests.push(`${req.method} ${path}${url.search}`);
    if (req.headers.authorization !== 'Bearer fake-token') return this.#send(res, 401, status(401, 'Unauthorized'));
    if (path === '/version') {
      const v = this.#opts.version ?? 'v1.31.0-fake';
      return this.#send(res, 200, { major: '1', minor: /^v1\.(\d+)/.exec(v)?.[1] ?? '31', gitVersion: v, platform: 'linux/amd64' });
    }
    if (req.method === 'GET' && RESOURCES[path])
      return this.#send(res, 200, {
        kind: 'APIResourceList',
        apiVersion: 'v1',
        groupVersion: path.replace(/^\/apis?\//, ''),
        resources: RESOURCES[path]!.map((r) => ({ ...r, singularName: '', verbs: ['get', 'list', 'patch', 'delete', 'watch'] })),
      });
    if (path === '/api/v1/nodes') return this.#send(res, 200, { kind: 'NodeList', apiVersion: 'v1', metadata: {}, items: [this.#node()] });
    if (path === `/api/v1/nodes/${FAKE_NODE}`) return this.#send(res, 200, { kind: 'Node', apiVersion: 'v1', ...this.#node() });

    const proxy = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/:]+)(?::(\d+))?\/proxy\/(.*)$/.exec(path);
    if (proxy) return this.#proxy(req, res, proxy[1]!, proxy[2]!, proxy[4]!);
    const log = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/log$/.exec(path);
    if (log) {
      const key = `${log[1]}/${log[2]}/${q.get('container')}${q.get('previous') === 'true' ? '/previous' : ''}`;
      const text = this.logs.get(key);
      return text === undefined ? this.#send(res, 400, status(400, `previous terminated container not found`)) : this.#send(res, 200, text, 'text/plain');
    }

    const selector = parseSelector(q.get('labelSelector') ?? '');
    if (req.method === 'GET' && q.get('watch') === 'true') {
      const ns = /^\/api\/v1\/namespaces\/([^/]+)\/pods$/.exec(path)?.[1];
      if (!ns) return this.#send(res, 404, status(404, 'watch only for pods'));
      res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
      for (const pod of this.pods(ns).filter((p) => matches(p, selector))) res.write(`${JSON.stringify({ type: 'ADDED', object: pod })}\n`);
      const w = { ns, selector, res };
      this.#watchers.add(w);
      req.on('close', () => this.#watchers.delete(w));
      return;
    }
    if (req.method === 'GET') {
      const obj = this.objects.get(path.toLowerCase());
      if (obj) return this.#send(res, 200, obj);
      const kind = Object.values(RESOURCES)
        .flat()
        .find((r) => path.endsWith(`/${r.name}`))?.kind;
      if (kind) return this.#send(res, 200, this.#list(`${path.toLowerCase()}/`, selector, kind));
      return this.#send(res, 404, status(404, `${path} not found`));
    }
    if (req.method === 'PATCH' || req.method === 'DELETE') {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        // Kept as text.
      }
      this.changes.push({ at: Date.now(), method: req.method, path, query: Object.fromEntries(q), contentType: req.headers['content-type'] ?? '', body });
      const resize = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/resize$/.exec(path);
      if (req.method === 'PATCH' && resize) return this.#resize(res, resize[1]!, resize[2]!, req.headers['content-type'] ?? '', body as Obj);
      if (req.method === 'PATCH') return this.#apply(req, res, path.toLowerCase(), q, body as Obj);
      return this.#delete(res, path.toLowerCase());
    }
    this.#send(res, 405, status(405, 'method not allowed'));
  }

  #listsImages(): boolean {
    return this.#startedAt !== null && Date.now() - this.#startedAt >= (this.#opts.nodeImagesAfterMs ?? 0);
  }

  #node(): Obj {
    return {
      metadata: { name: FAKE_NODE, uid: 'node-uid-1', labels: FAKE_NODE_LABELS },
      status: {
        nodeInfo: { kubeletVersion: 'v1.31.0-fake', containerRuntimeVersion: 'containerd://fake', kernelVersion: '6.1.0' },
        images: (this.#listsImages() ? (this.#opts.nodeImages ?? []) : []).map((n) => ({ names: Array.isArray(n) ? n : [n], sizeBytes: 1 })),
      },
    };
  }

  async #apply(req: IncomingMessage, res: ServerResponse, path: string, q: URLSearchParams, obj: Obj): Promise<void> {
    const contentType = req.headers['content-type'] ?? '';
    this.applies.push({ path, contentType, fieldManager: q.get('fieldManager'), force: q.get('force'), kind: obj.kind, name: obj.metadata?.name });
    if (contentType !== 'application/apply-patch+yaml') return this.#send(res, 415, status(415, `fake: only server-side apply, got ${contentType}`));
    if (!q.get('fieldManager')) return this.#send(res, 422, status(422, 'fieldManager is required for apply patch'));
    const ns = obj.metadata?.namespace;
    if (ns && obj.kind !== 'Namespace' && !this.objects.has(`/api/v1/namespaces/${ns}`))
      return this.#send(res, 404, status(404, `namespaces "${ns}" not found`));
    obj.metadata = { ...obj.metadata, uid: obj.metadata.uid ?? randomUUID(), resourceVersion: String(++this.#rv) };
    const existed = this.objects.has(path);
    this.objects.set(path, obj);
    if (obj.kind === 'Pod' && !existed) this.#startPod(obj, 'ready');
    if (obj.kind === 'DaemonSet' && !existed) this.#daemonSetPod(obj, 'fake1', this.#opts.agentPodUid ?? randomUUID());
    this.#send(res, existed ? 200 : 201, obj);
  }

  #daemonSetPod(ds: Obj, suffix: string, uid: string): void {
    const template = ds.spec.template;
    const ns = ds.metadata.namespace;
    const pod: Obj = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `${ds.metadata.name}-${suffix}`,
        namespace: ns,
        labels: template.metadata.labels,
        uid,
        resourceVersion: String(++this.#rv),
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: ds.metadata.name, uid: ds.metadata.uid }],
      },
      // A real DaemonSet's pods are bound to their node (the controller pins it, the scheduler binds it).
      spec: { ...structuredClone(template.spec), nodeName: FAKE_NODE },
    };
    this.objects.set(`/api/v1/namespaces/${ns}/pods/${pod.metadata.name}`, pod);
    this.#startPod(pod, this.#opts.agentStart ?? 'ready');
  }

  /** The resize subresource: a strategic merge patch of containers' resources, applied to the spec and the status. */
  #resize(res: ServerResponse, ns: string, name: string, contentType: string, body: Obj): void {
    if (this.#opts.resize === false) return this.#send(res, 404, status(404, 'the server could not find the requested resource'));
    if (contentType !== 'application/strategic-merge-patch+json')
      return this.#send(res, 415, status(415, `fake: resize takes a strategic merge patch, got ${contentType}`));
    const pod = this.objects.get(`/api/v1/namespaces/${ns}/pods/${name}`.toLowerCase());
    if (!pod) return this.#send(res, 404, status(404, `pods "${name}" not found`));
    for (const c of body?.spec?.containers ?? []) {
      const target = pod.spec.containers.find((x: Obj) => x.name === c.name);
      if (!target) return this.#send(res, 422, status(422, `container ${c.name} not found`));
      target.resources = {
        requests: { ...target.resources?.requests, ...c.resources?.requests },
        limits: { ...target.resources?.limits, ...c.resources?.limits },
      };
      const st = pod.status.containerStatuses.find((x: Obj) => x.name === c.name);
      if (st) st.resources = structuredClone(target.resources);
    }
    pod.metadata.resourceVersion = String(++this.#rv);
    this.#notify('MODIFIED', pod);
    this.#send(res, 200, pod);
  }

  #startPod(pod: Obj, how: 'ready' | 'image-pull-backoff'): void {
    const c = pod.spec.containers[0];
    if (pod.metadata.labels?.['attestorm.dev/role'] === 'socket-janitor') {
      // A janitor runs to completion at once; the test reads what it was told from its spec (janitors).
      pod.status = {
        phase: 'Succeeded',
        containerStatuses: [{ name: c.name, image: c.image, ready: false, restartCount: 0, state: { terminated: { exitCode: 0, reason: 'Completed' } } }],
      };
      this.janitors.push({
        at: Date.now(),
        namespace: pod.metadata.namespace,
        node: pod.spec.nodeName,
        env: Object.fromEntries((c.env ?? []).map((e: Obj) => [e.name, e.value])),
        hostPath: pod.spec.volumes?.[0]?.hostPath?.path,
      });
      return this.#notify('ADDED', pod);
    }
    // As a kubelet does: a pod bound to the node whose node selector the node does not match is
    // rejected at admission, reported Failed, and still listed (filler pods rely on it).
    const selector = Object.entries((pod.spec.nodeSelector ?? {}) as Record<string, string>);
    if (pod.spec.nodeName && selector.some(([k, v]) => FAKE_NODE_LABELS[k] !== v)) {
      pod.status = {
        phase: 'Failed',
        reason: 'NodeAffinity',
        message: "Pod was rejected: Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector",
      };
      return this.#notify('ADDED', pod);
    }
    pod.status = {
      phase: how === 'ready' ? 'Running' : 'Pending',
      containerStatuses: [
        how === 'ready'
          ? {
              name: c.name,
              image: c.image,
              ready: true,
              restartCount: 0,
              containerID: `containerd://${hex64()}`,
              state: { running: { startedAt: new Date().toISOString() } },
            }
          : {
              name: c.name,
              image: c.image,
              ready: false,
              restartCount: 0,
              state: { waiting: { reason: 'ImagePullBackOff', message: `Back-off pulling image "${c.image}"` } },
            },
      ],
    };
    this.#notify('ADDED', pod);
  }

  #delete(res: ServerResponse, path: string): void {
    const refused = this.#opts.refuseDeletes?.[path];
    if (refused) return this.#send(res, refused, status(refused, `fake: deleting ${path} is refused`));
    const obj = this.objects.get(path);
    if (!obj) return this.#send(res, 404, status(404, `${path} not found`));
    this.deleted.push(path);
    this.objects.delete(path);
    if (obj.kind === 'Pod') {
      this.#notify('DELETED', obj);
      // Its DaemonSet's controller creates a new pod (new name, new UID) in its place.
      const owner = obj.metadata.ownerReferences?.find((r: Obj) => r.kind === 'DaemonSet');
      const ds = owner && this.objects.get(`/apis/apps/v1/namespaces/${obj.metadata.namespace}/daemonsets/${owner.name}`);
      if (ds) this.#daemonSetPod(ds, `fake${++this.#replacements}`, randomUUID());
    }
    const ns = /^\/api\/v1\/namespaces\/([^/]+)$/.exec(path)?.[1];
    if (ns) {
      for (const p of [...this.objects.keys()]) {
        if (p.includes(`/namespaces/${ns}/`)) {
          const o = this.objects.get(p)!;
          this.objects.delete(p);
          if (o.kind === 'Pod') this.#notify('DELETED', o);
        }
      }
    }
    this.#send(res, 200, { kind: 'Status', apiVersion: 'v1', status: 'Success', details: { name: obj.metadata.name } });
  }

  #proxy(req: IncomingMessage, res: ServerResponse, ns: string, pod: string, rest: string): void {
    // `*/<pod>`: any namespace (a run whose namespace names the test cannot know beforehand).
    const target = this.proxies.get(`${ns}/${pod}`) ?? this.proxies.get(`*/${pod}`);
    if (!target || !this.objects.has(`/api/v1/namespaces/${ns}/pods/${pod}`)) return this.#send(res, 503, status(503, `no endpoints for pod ${pod}`));
    const out = httpRequest(`${target}/${rest}`, { method: req.method }, (r) => {
      res.writeHead(r.statusCode ?? 502, { 'content-type': r.headers['content-type'] ?? 'application/json' });
      r.pipe(res);
    });
    out.on('error', (err) => this.#send(res, 502, status(502, `proxy: ${err.message}`)));
    req.pipe(out);
  }
}

function status(code: number, message: string): Obj {
  return { kind: 'Status', apiVersion: 'v1', status: 'Failure', message, code };
}

function parseSelector(s: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of s.split(',').filter(Boolean)) {
    const [k, v] = part.split('=');
    out[k!] = v ?? '';
  }
  return out;
}

function matches(o: Obj, selector: Record<string, string>): boolean {
  return Object.entries(selector).every(([k, v]) => o.metadata?.labels?.[k] === v);
}

export function hex64(): string {
  return (randomUUID() + randomUUID()).replace(/-/g, '').slice(0, 64);
}
