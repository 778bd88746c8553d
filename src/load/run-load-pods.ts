// The pod processes of one load run — the storm's, the bystanders', replacements and a burst's —
// from spawn to finish: each one's data routed to its group's aggregator, all released together,
// late joiners released as they get ready, all stopped at once, and the run's wait for them.
import type { ChildProcess } from 'node:child_process';
import { ConfigError, SlowStartError } from '../errors.js';
import type { LoadAggregator } from './aggregator.js';
import { WORKER_NICE } from './bundle.js';
import { LiveStorm } from './live-storm.js';
import { PodHandle } from './pod-handle.js';
import type { LoadPod } from './pod-host.js';
import type { LoadPlan } from './run-load-plan.js';
import type { GoMessage, PodConfig } from './worker/messages.js';

/** Where the run's data goes: the storm's aggregator, and the bystanders' when there are bystanders. */
export interface LoadCounts {
  storm: LoadAggregator;
  bystanders: LoadAggregator | null;
}

// After a stop (abort, maxCalls): how long pods get to ship their last data.
const STOP_WAIT_MS = 3000;

export class LoadRunPods {
  readonly #plan: LoadPlan;
  readonly #counts: LoadCounts;
  readonly #handles: PodHandle[] = [];
  readonly #bystanders = new Set<PodHandle>();
  /** Workers per pod process (a burst's pods may differ from workersPerPod). */
  readonly #workersOf = new Map<PodHandle, number>();
  /** Storm pods told to go; `live` has when each joined and left (the live pods/workers series). */
  readonly #calling = new Set<PodHandle>();
  readonly live = new LiveStorm();
  /** The latest second each pod has reported, for emitting a second once all running pods are in. */
  readonly #reported = new Map<PodHandle, number>();
  #go: GoMessage | null = null;
  #stopping = false;
  #wake: () => void = () => {};

  constructor(plan: LoadPlan, counts: LoadCounts) {
    this.#plan = plan;
    this.#counts = counts;
  }

  /** Wakes whoever is in pause() (a pod finished, a stop, the end time). */
  readonly poke = (): void => this.#wake();

  pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#wake = resolve;
      setTimeout(resolve, ms);
    });
  }

  /** True from the release until the run stops: a wave may join, a ready pod is told to go. */
  get running(): boolean {
    return this.#go !== null && !this.#stopping;
  }

  get stopping(): boolean {
    return this.#stopping;
  }

  /** The host's podMain: the storm's and the bystanders' pods, replacements (churn) included. */
  readonly podMain = (pod: LoadPod): ChildProcess => this.spawn(pod).child;

  /** Spawns a pod process in `pod`; `workers` overrides the storm's workersPerPod (a burst's pods). */
  spawn(pod: LoadPod, workers?: number): PodHandle {
    const { host, bundles, podConfig, bystanderConfig, startTimeoutMs, opts } = this.#plan;
    const bystander = pod.group === 'bystanders';
    if (bystander && !bystanderConfig) throw new ConfigError(`pod ${pod.name} is a bystander pod but load.bystanders is not set`);
    const groupAgg = bystander ? this.#counts.bystanders! : this.#counts.storm;
    const base = bystander ? bystanderConfig! : workers === undefined ? podConfig : { ...podConfig, workers };
    const config: PodConfig = { ...base, workerNice: pod.cpuGroup ? WORKER_NICE : null };
    const child = host.spawnInPod(pod, process.execPath, [bundles.pod, JSON.stringify(config)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const progressed = (second: number) => this.#reported.set(handle, Math.max(this.#reported.get(handle) ?? -1, second));
    const handle = new PodHandle(
      pod,
      child,
      startTimeoutMs,
      // A second's data comes in parts (the pod forwards what its workers shipped so far); only the
      // pod's progress message says every worker's part of it is in.
      (p, data) => {
        groupAgg.add(p, data);
        if (opts.maxCalls !== undefined && this.#counts.storm.calls() >= opts.maxCalls) this.stopAll();
      },
      progressed,
    );
    this.#handles.push(handle);
    this.#workersOf.set(handle, config.workers);
    if (bystander) this.#bystanders.add(handle);
    groupAgg.notePod(pod);
    // Replacement pods (churn) and a burst's pods join the running load as soon as their workers are up.
    handle.ready.then(() => {
      if (this.#go && !this.#stopping) this.#startCalling(handle);
      else if (this.#go && this.#stopping) handle.stop();
    }, this.poke);
    void handle.finished.then(this.poke);
    return handle;
  }

  /** Sends go to a ready pod, once; a storm pod counts as live from then until it finishes. */
  #startCalling(h: PodHandle): void {
    const go = this.#go;
    if (!go || this.#calling.has(h)) return;
    this.#calling.add(h);
    // A pod joining mid-run must not hold back the seconds before it existed.
    if (!this.#reported.has(h)) this.#reported.set(h, Math.max(-1, Math.floor((Date.now() - go.t0) / 1000) - 1));
    h.go(go);
    if (this.#bystanders.has(h)) return;
    const workers = this.#workersOf.get(h) ?? 0;
    this.live.join(Math.max(Date.now(), go.t0), workers);
    void h.finished.then(() => this.live.leave(Date.now(), workers));
  }

  /**
   * Waits until every pod alive is ready. A pod its owner ended while starting (churn) is no failure —
   * its replacement joins — but a pod that timed out or crashed fails the run.
   */
  async waitReady(): Promise<void> {
    const { startTimeoutMs } = this.#plan;
    const handles = this.#handles;
    const startDeadline = Date.now() + startTimeoutMs;
    while (!this.#stopping) {
      const failure = handles.find((h) => h.failure)?.failure;
      if (failure) throw failure;
      const live = handles.filter((h) => !h.isFinished);
      if (live.length > 0 && live.every((h) => h.isReady)) return;
      // Churn faster than start-up would keep some pod starting forever: once a pod has been
      // replaced, start with the ready ones; the others join when ready, as replacements do.
      const churned = handles.some((h) => h.isFinished && !h.failure);
      if (churned && live.some((h) => h.isReady)) return;
      if (Date.now() > startDeadline) throw new SlowStartError(`load: pods were not ready within ${startTimeoutMs} ms`);
      await this.pause(100);
    }
  }

  /** Releases the ready pods together (unless stopped already); pods ready later join on their own. */
  release(go: GoMessage): void {
    this.#go = go;
    if (!this.#stopping) for (const h of this.#handles) if (h.isReady) this.#startCalling(h);
  }

  /** Stops every pod: workers finish their call in flight and ship their last data. */
  stopAll(): void {
    if (this.#stopping) return;
    this.#stopping = true;
    for (const h of this.#handles) h.stop();
    this.poke();
  }

  /**
   * Waits until the end time has passed (or a stop) and every pod still around has reported, but
   * not past hardEnd, nor STOP_WAIT_MS after a stop.
   */
  async drain(endAt: number, hardEnd: number): Promise<void> {
    let stopDeadline = Infinity;
    for (;;) {
      const now = Date.now();
      if (this.#stopping && stopDeadline === Infinity) stopDeadline = now + STOP_WAIT_MS;
      if ((now >= endAt || this.#stopping) && this.#handles.every((h) => h.isFinished)) break;
      if (now >= hardEnd || now >= stopDeadline) break;
      await this.pause(250);
    }
  }

  /** After the load phase: a pod ready from now on is stopped, and no wave may join. */
  endLoadPhase(): void {
    this.#stopping = true;
  }

  /** Pods spawned by a host that does not stop them (defensive): never leave a process behind. */
  killLeftovers(): void {
    for (const h of this.#handles) if (h.child.exitCode === null && h.child.signalCode === null) h.child.kill('SIGKILL');
  }

  /**
   * The latest second every running pod has reported (`upTo` when it is lower): a second past it
   * still waits for some pod's data.
   */
  reportedByAll(upTo: number): number {
    let byPods = upTo;
    for (const h of this.#handles) if (h.isReady && !h.isFinished) byPods = Math.min(byPods, this.#reported.get(h) ?? -1);
    return byPods;
  }

  /** Every pod process and worker of the run while it lives (the CPU meter's processes). */
  livePids(): number[] {
    return this.#handles.flatMap((h) => (h.isFinished ? [] : [...(h.child.pid !== undefined ? [h.child.pid] : []), ...h.workerPids]));
  }

  /** The storm's pods, replacements and a burst's included: not the bystanders. */
  storm(): PodHandle[] {
    return this.#handles.filter((h) => !this.#bystanders.has(h));
  }

  /** Worker processes the storm started (each pod's own size). */
  stormWorkers(): number {
    return this.storm().reduce((n, h) => n + (this.#workersOf.get(h) ?? 0), 0);
  }

  bystanders(): PodHandle[] {
    return [...this.#bystanders];
  }
}
