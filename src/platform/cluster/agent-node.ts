// Whether the agent's node is still there while a variant runs: its container (kind: removed with
// `docker rm -f`, stopped, or started again after its engine restarted), its Node object (deleted,
// NotReady) and the API server (not answering for longer than a bound). The first loss found is
// kept, worded for results.json, as the reason the run ends.
import { CoreV1Api, type KubeConfig, type V1Node } from '@kubernetes/client-node';
import { withinMs } from '../../util/index.js';

/** The node container as its engine sees it (kind's kindNodeContainer); other clusters have none. */
export type NodeContainerProbe = (node: string) => Promise<{ running: true; startedAt: string } | { running: false; why: string }>;

export interface AgentNodeWatchOptions {
  /** The node container's state, where the node is a container on this host (kind). */
  container?: NodeContainerProbe | null;
  intervalMs?: number;
  /** How long the API server may not answer before the run ends (default 30 s). */
  apiOutageMs?: number;
  /** Each API call's own bound (default 10 s). */
  callMs?: number;
  now?: () => number;
}

const notFound = (err: unknown) => (err as { code?: number }).code === 404;

/** Why the Node object says its kubelet is not serving, or null while it is Ready. */
export function nodeNotReady(node: V1Node): string | null {
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  if (!ready || ready.status === 'True') return null;
  return `NotReady since ${ready.lastTransitionTime ? new Date(ready.lastTransitionTime).toISOString() : 'an unknown time'} (${ready.reason ?? 'no reason'}: ${ready.message ?? 'no message'})`;
}

export class AgentNodeWatch {
  #core: CoreV1Api;
  #o: Required<Omit<AgentNodeWatchOptions, 'container'>> & { container: NodeContainerProbe | null };
  #node: string | null = null;
  #startedAt: string | null = null;
  #apiDownSince: number | null = null;
  #timer: NodeJS.Timeout | null = null;
  #checking: Promise<void> | null = null;
  /** Why the agent's node is lost, once it is; never cleared. */
  lost: string | null = null;
  /** The node, once it is gone for good (its container removed or stopped, its Node deleted or NotReady): none of its pods will confirm a deletion. */
  goneNode: string | null = null;

  constructor(kc: KubeConfig, opts: AgentNodeWatchOptions = {}) {
    this.#core = kc.makeApiClient(CoreV1Api);
    this.#o = {
      container: opts.container ?? null,
      intervalMs: opts.intervalMs ?? 2000,
      apiOutageMs: opts.apiOutageMs ?? 30_000,
      callMs: opts.callMs ?? 10_000,
      now: opts.now ?? Date.now,
    };
  }

  get node(): string | null {
    return this.#node;
  }

  /** The node the agent pod was bound to (the watch's spec.nodeName). */
  follow(node: string): void {
    if (node === this.#node) return;
    this.#node = node;
    this.#startedAt = null;
  }

  start(): void {
    this.#timer ??= setInterval(() => void this.check(), this.#o.intervalMs);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }

  /** One check (one at a time); resolves with the loss found so far. */
  async check(): Promise<string | null> {
    if (!this.lost && !this.#checking) this.#checking = this.#check().finally(() => (this.#checking = null));
    await this.#checking;
    return this.lost;
  }

  async #check(): Promise<void> {
    const node = this.#node;
    if (!node) return;
    if (this.#o.container) {
      const c = await this.#o.container(node);
      // The agent moved to another node while this one was asked about: its answer is of no use now.
      if (this.#node !== node) return;
      if (!c.running) return this.#gone(node, `the agent's node ${node} is lost: ${c.why}`);
      if (this.#startedAt !== null && c.startedAt !== this.#startedAt)
        return void (this.lost = `the agent's node ${node} restarted (its container started again at ${c.startedAt}, as when its engine restarts): the pods on it started over and what the load pods held is lost`);
      this.#startedAt = c.startedAt;
    }
    let n: V1Node;
    try {
      n = await withinMs(this.#core.readNode({ name: node }), this.#o.callMs, `GET node ${node}`);
    } catch (err) {
      if (notFound(err)) return this.#gone(node, `the agent's node ${node} was deleted from the cluster`);
      const now = this.#o.now();
      this.#apiDownSince ??= now;
      if (now - this.#apiDownSince >= this.#o.apiOutageMs)
        this.lost = `the API server has not answered for ${Math.round((now - this.#apiDownSince) / 1000)} s (${(err as Error).message})`;
      return;
    }
    this.#apiDownSince = null;
    const notReady = nodeNotReady(n);
    if (notReady) this.#gone(node, `the agent's node ${node} is ${notReady}`);
  }

  #gone(node: string, why: string): void {
    this.lost = why;
    this.goneNode = node;
  }
}
