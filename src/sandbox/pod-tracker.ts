// Book-keeping of the sandbox's pods and the processes in each, and the one way a pod's process
// tree is stopped: SIGTERM to everything in its cgroup (or its process groups), SIGKILL after a grace.
import type { ChildProcess } from 'node:child_process';
import { sleep } from '../util/index.js';
import type { PodDoc } from './pod-doc.js';
import type { SandboxPod } from './sandbox-pod.js';

export interface PodState {
  pod: SandboxPod;
  doc: PodDoc;
  main: ChildProcess | null;
  /** Every process spawnInPod started for this pod (each leads its own process group). */
  procs: Set<ChildProcess>;
  timer: NodeJS.Timeout | null;
  /** Set once the pod is ending; resolves when its processes and cgroup are gone. */
  ending: Promise<void> | null;
}

function signal(pid: number, sig: NodeJS.Signals | 0): boolean {
  try {
    process.kill(pid, sig);
    return true;
  } catch {
    return false;
  }
}

export class PodTracker {
  readonly #states = new Map<string, PodState>();
  readonly #uidOnly: boolean;
  readonly #graceMs: number;

  constructor(opts: { uidOnly: boolean; graceMs?: number }) {
    this.#uidOnly = opts.uidOnly;
    this.#graceMs = opts.graceMs ?? 2000;
  }

  add(pod: SandboxPod, doc: PodDoc): PodState {
    const state: PodState = { pod, doc, main: null, procs: new Set(), timer: null, ending: null };
    this.#states.set(pod.uid, state);
    return state;
  }

  get(uid: string): PodState | undefined {
    return this.#states.get(uid);
  }

  /** Pods not ending, by slot index. */
  running(): PodState[] {
    return [...this.#states.values()].filter((s) => !s.ending).sort((a, b) => a.pod.index - b.pod.index);
  }

  all(): PodState[] {
    return [...this.#states.values()];
  }

  /** What the kubelet lists: running pods only (an ending pod leaves the list at once). */
  docs(): PodDoc[] {
    return this.running().map((s) => s.doc);
  }

  /** Stops the pod's lifetime timer; true if the pod was running until now. */
  markEnding(state: PodState): boolean {
    if (state.timer) clearTimeout(state.timer);
    state.timer = null;
    return this.#states.has(state.pod.uid);
  }

  addProcess(state: PodState, child: ChildProcess): void {
    state.procs.add(child);
  }

  remove(state: PodState): void {
    this.#states.delete(state.pod.uid);
  }

  #pids(state: PodState): number[] {
    return state.pod.cgroup ? state.pod.cgroup.pids() : [];
  }

  #groups(state: PodState): number[] {
    return [...state.procs].map((c) => c.pid).filter((p): p is number => p !== undefined);
  }

  #alive(state: PodState): boolean {
    if (this.#pids(state).length > 0) return true;
    if (this.#uidOnly) return this.#groups(state).some((g) => signal(-g, 0));
    return [...state.procs].some((c) => c.exitCode === null && c.signalCode === null);
  }

  #signalAll(state: PodState, sig: NodeJS.Signals): void {
    for (const pid of this.#pids(state)) signal(pid, sig);
    for (const g of this.#groups(state)) signal(-g, sig);
  }

  /** SIGTERM the pod's process tree, SIGKILL what is left after the grace period. */
  async terminate(state: PodState): Promise<void> {
    this.#signalAll(state, 'SIGTERM');
    const graceEnd = Date.now() + this.#graceMs;
    while (this.#alive(state) && Date.now() < graceEnd) await sleep(25);
    const killEnd = Date.now() + 5000;
    while (this.#alive(state) && Date.now() < killEnd) {
      this.#signalAll(state, 'SIGKILL');
      await sleep(25);
    }
  }
}
