// Follows the agent pod's status as the watch delivers it: OOM kills (reason OOMKilled, or
// Error/137 while the cgroup's oom_kill counter rose — containerd races report that), each counted
// once by container ID + finishedAt; restarts from restartCount; downtime between not-ready and
// ready again; and the container ID, which changes on every restart (the sampler re-resolves it).
// A pod deleted by a fault (agent-kill) is a death of its own; its DaemonSet's replacement (a new
// pod UID) counts as a restart, and the deleted pod's last status updates are ignored.
import type { V1ContainerStateTerminated, V1Pod } from '@kubernetes/client-node';
import type { EventSample } from '../../scenario/index.js';

/** One death of the agent container (the contract's DeathRecord minus what the runner adds: rep, phase, counted). */
export interface Death {
  cause: 'oom-kill' | 'signal' | 'exit' | 'fault-kill';
  detail: string;
  containerID: string;
  finishedAt: string;
  /** When the tracker saw it (epoch ms). */
  seenAt: number;
}

export interface AgentTrackerOptions {
  container: string;
  now?: () => number;
  /** Whether the agent cgroup's oom_kill counter rose since the last call (null: cannot tell). */
  oomKillRose?: () => boolean | null;
  event?: (type: EventSample['type'], detail?: string) => void;
  onContainerChange?: (containerID: string) => void;
  /** A container that cannot start (image pull failures, bad config): the run cannot go on. */
  onStuck?: (reason: string) => void;
}

const STUCK = new Set(['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'CreateContainerConfigError', 'CreateContainerError']);

/** How a terminated container died. Exported for the tests and the report's wording. */
export function classifyTermination(t: V1ContainerStateTerminated, oomKillRose: boolean | null): { cause: Death['cause']; detail: string } {
  const finished = `exit code ${t.exitCode}${t.signal ? `, signal ${t.signal}` : ''}`;
  if (t.reason === 'OOMKilled') return { cause: 'oom-kill', detail: `OOMKilled (${finished})` };
  if (t.exitCode === 137 && oomKillRose === true) return { cause: 'oom-kill', detail: `${t.reason ?? 'Error'}/137 while the cgroup's oom_kill counter rose` };
  if (t.exitCode === 137 || t.signal)
    return {
      cause: 'signal',
      detail: `${t.reason ?? 'killed'} (${finished})${t.exitCode === 137 && oomKillRose === null ? '; oom_kill counter not readable' : ''}`,
    };
  return { cause: 'exit', detail: `${t.reason ?? 'exited'} (${finished})` };
}

export class AgentTracker {
  readonly deaths: Death[] = [];
  #opts: AgentTrackerOptions;
  #now: () => number;
  #seen = new Set<string>();
  #firstRestartCount: number | null = null;
  #restartCount = 0;
  #containerID: string | null = null;
  #ready = false;
  #everReady = false;
  #downSince: number | null = null;
  #downtimeMs = 0;
  #podUid: string | null = null;
  #gone = new Set<string>();
  /** Restarts of earlier pods, plus one per replacement pod. */
  #banked = 0;

  constructor(opts: AgentTrackerOptions) {
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
  }

  get ready(): boolean {
    return this.#ready;
  }

  get containerID(): string | null {
    return this.#containerID;
  }

  get oomKills(): number {
    return this.deaths.filter((d) => d.cause === 'oom-kill').length;
  }

  get restarts(): number {
    return this.#banked + (this.#firstRestartCount === null ? 0 : this.#restartCount - this.#firstRestartCount);
  }

  /** The pod the tracker follows now (null before the first status). */
  get podUid(): string | null {
    return this.#podUid;
  }

  /** Whether a pod UID belongs to a pod deleted on purpose (its late status updates mean nothing). */
  isGone(uid: string | undefined): boolean {
    return uid !== undefined && this.#gone.has(uid);
  }

  /** The agent pod `uid` was deleted on purpose (fault agent-kill): one death, down until its replacement is ready. */
  podDeleted(uid: string, detail: string): void {
    this.#gone.add(uid);
    const now = this.#now();
    this.deaths.push({ cause: 'fault-kill', detail, containerID: this.#containerID ?? '', finishedAt: new Date(now).toISOString(), seenAt: now });
    this.#opts.event?.('agent-exit', detail);
    this.#setReady(false);
  }

  downtimeSeconds(): number {
    const open = this.#downSince !== null ? this.#now() - this.#downSince : 0;
    return (this.#downtimeMs + open) / 1000;
  }

  /** One pod object from the watch (ADDED or MODIFIED). */
  observe(pod: V1Pod): void {
    const uid = pod.metadata?.uid;
    if (this.isGone(uid)) return;
    const status = pod.status?.containerStatuses?.find((c) => c.name === this.#opts.container);
    if (!status) return;
    if (uid && this.#podUid && uid !== this.#podUid) {
      // A replacement pod (its controller re-created a deleted one): restart counts start afresh.
      this.#banked = this.restarts + 1;
      this.#firstRestartCount = null;
      this.#restartCount = 0;
      this.#containerID = null;
      this.#opts.event?.('agent-restart', `pod replaced (new pod UID ${uid})`);
    }
    if (uid) this.#podUid = uid;
    this.#firstRestartCount ??= status.restartCount;
    if (status.restartCount > this.#restartCount) {
      if (this.#restartCount > 0 || this.#firstRestartCount < status.restartCount) this.#opts.event?.('agent-restart', `restart count ${status.restartCount}`);
    }
    this.#restartCount = Math.max(this.#restartCount, status.restartCount);
    for (const t of [status.lastState?.terminated, status.state?.terminated]) {
      if (t) this.#terminated(t, status.containerID ?? '');
    }
    const waiting = status.state?.waiting?.reason;
    if (waiting && STUCK.has(waiting)) this.#opts.onStuck?.(`${waiting}: ${status.state?.waiting?.message ?? status.image}`);
    if (status.containerID && status.containerID !== this.#containerID && status.state?.running) {
      this.#containerID = status.containerID;
      this.#opts.onContainerChange?.(status.containerID);
    }
    this.#setReady(status.ready === true && !!status.state?.running);
  }

  #terminated(t: V1ContainerStateTerminated, currentID: string): void {
    const id = t.containerID ?? currentID;
    const finishedAt = t.finishedAt ? new Date(t.finishedAt).toISOString() : '';
    const key = `${id}@${finishedAt}`;
    if (this.#seen.has(key)) return;
    this.#seen.add(key);
    const { cause, detail } = classifyTermination(t, t.exitCode === 137 ? (this.#opts.oomKillRose?.() ?? null) : false);
    this.deaths.push({ cause, detail, containerID: id, finishedAt, seenAt: this.#now() });
    this.#opts.event?.(cause === 'oom-kill' ? 'oom-kill' : 'agent-exit', detail);
    this.#setReady(false);
  }

  #setReady(ready: boolean): void {
    if (ready === this.#ready) return;
    this.#ready = ready;
    const now = this.#now();
    if (ready) {
      if (this.#downSince !== null) this.#downtimeMs += now - this.#downSince;
      this.#downSince = null;
      this.#opts.event?.('agent-ready', this.#containerID ?? undefined);
      this.#everReady = true;
    } else if (this.#everReady) {
      this.#downSince = now;
    }
  }
}
