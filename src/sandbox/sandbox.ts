// The local pod sandbox: pods with Kubernetes identities whose processes live in real cgroups named
// the way the kubelet names them, a kubelet emulator serving them, churn, and the owner that reaps it all.
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { setUpCgroups, type CgroupSetup } from './sandbox-cgroups.js';
import { ChildProcessError, PlatformError, RunError } from '../errors.js';
import { onCleanup } from '../util/index.js';
import { CrashBackoff } from './crash-backoff.js';
import { startKubeletEmulator, type KubeletEmulator } from './kubelet-emulator.js';
import { DEFAULT_NODE_PODS, parseSandboxOptions, type ResolvedSandboxOptions, type SandboxOptions } from './options.js';
import type { PodDoc } from './pod-doc.js';
import type { CgroupDriver } from './pod-cgroup-path.js';
import { placePodInCgroup, removeKubepods, removePodCgroups, removeRunRoot } from './pod-cgroups.js';
import { PodFactory } from './pod-factory.js';
import { requireSetpriv, spawnPodProcess } from './pod-spawn.js';
import { writeOwnerFile } from './run-id.js';
import { RunTempFolder } from './run-temp.js';
import { PodTracker } from './pod-tracker.js';
import type { SandboxPod } from './sandbox-pod.js';
import { otherPodIds, podUidProblem, type OsIds } from './uid-reach.js';

export type { PodGroup, SandboxPod } from './sandbox-pod.js';

/**
 * Starts a pod's main process with sandbox.spawnInPod and returns it. Requirement on that process:
 * it must be spawned with an IPC channel (stdio including 'ipc') and exit on process 'disconnect',
 * and make its own children do the same, so a sandbox owner killed by SIGKILL takes its pods with it.
 */
export type PodMain = (pod: SandboxPod) => ChildProcess;

export interface Sandbox {
  readonly runId: string;
  readonly kubeletUrl: string;
  readonly tokenFile: string | null;
  readonly caFile: string | null;
  readonly fidelity: 'cgroup-pods' | 'uid-only';
  readonly cgroupVersion: 'v1' | 'v2' | null;
  readonly cgroupDriver: CgroupDriver;
  /** Why this fidelity was chosen (for results). */
  readonly fidelityReason: string;
  /** The kubelet emulator (request counters, visible pods). */
  readonly kubelet: KubeletEmulator;
  /** Bystander pods this sandbox starts beside the storm's (0 without opts.bystanders). */
  readonly bystanderPods: number;
  /** Pods currently running (not ending), by slot index; both groups (see SandboxPod.group). */
  pods(): SandboxPod[];
  /**
   * Starts opts.pods pods, then opts.bystanders.pods bystander pods (never churned), calling podMain
   * for each (and for each replacement under churn); resolves
   * once every main process has spawned. A pod whose main process exits ends (its other processes
   * are killed, its cgroup removed); under churn a replacement with a new UID takes its slot.
   */
  startPods(podMain: PodMain): Promise<void>;
  /**
   * A process inside the pod: in its container cgroup, as osUid/osGid, in a process group of its
   * own (detached), with ATTESTORM_RUN_ID, ATTESTORM_POD_UID, ATTESTORM_POD_NAME,
   * ATTESTORM_POD_NAMESPACE, ATTESTORM_POD_INDEX, ATTESTORM_POD_GROUP, ATTESTORM_POD_SERVICE_ACCOUNT,
   * ATTESTORM_CONTAINER_ID and ATTESTORM_KUBELET_URL added to its environment.
   */
  spawnInPod(pod: SandboxPod, command: string, args: readonly string[], options?: SpawnOptions): ChildProcess;
  /**
   * A path to file that every pod's processes can read: the file, or a copy in the run's temp
   * folder when pods of another uid cannot reach it (a checkout below a 0700 folder).
   */
  shareWithPods(file: string): string;
  /** 'pod-start': the main process spawned. 'pod-end': its processes are gone and its cgroup removed. */
  on(event: 'pod-start' | 'pod-end', listener: (pod: SandboxPod) => void): this;
  off(event: 'pod-start' | 'pod-end', listener: (pod: SandboxPod) => void): this;
  /** Ends `count` running pods and starts new ones (new UIDs) in their slots at once (a churn fault). */
  replacePods(count: number): Promise<void>;
  /**
   * Starts `count` extra storm pods now, after startPods (a burst fault's wave of new pods): new
   * UIDs and slots, the storm's workload (ReplicaSet, labels, service account, image), listed by the
   * kubelet after its visibility delay. Each runs podMain's process (default: startPods' podMain);
   * they are neither churned nor replaced. Resolves with the pods once every main process spawned.
   */
  addPods(count: number, podMain?: PodMain): Promise<SandboxPod[]>;
  /** Ends the given pods as churn does (SIGTERM, SIGKILL after the grace, cgroup removed); no replacement. */
  endPods(pods: readonly SandboxPod[]): Promise<void>;
  /** Stops churn, SIGTERMs every pod's process tree (SIGKILL after 2 s), removes the pod cgroups. */
  stopPods(): Promise<void>;
  /** stopPods, the kubelet emulator, the temp files and the run's cgroup root. Idempotent. */
  close(): Promise<void>;
}

class LocalSandbox extends EventEmitter implements Sandbox {
  readonly runId: string;
  readonly cgroupDriver: CgroupDriver;
  readonly fidelity: 'cgroup-pods' | 'uid-only';
  readonly fidelityReason: string;
  readonly cgroupVersion: 'v1' | 'v2' | null;
  kubelet!: KubeletEmulator;
  tokenFile: string | null = null;
  caFile: string | null = null;

  readonly #opts: ResolvedSandboxOptions;
  readonly #cg: CgroupSetup | null;
  readonly #tracker: PodTracker;
  readonly #temp: RunTempFolder;
  readonly #factory: PodFactory;
  #docs: PodDoc[] = [];
  #podMain: PodMain | null = null;
  #churning = false;
  /** Next slot index for an extra pod (addPods): slots are never reused. */
  #nextExtraSlot = 0;
  #closing: Promise<void> | null = null;
  /** Young deaths per pod slot and the pending back-off waits (reset by stopPods). */
  readonly #backoff = new CrashBackoff();
  #unregister: () => void = () => {};
  /** Path of setpriv when pods change uid on cgroup v2 (see spawnPodProcess). */
  #setpriv: string | null = null;

  constructor(opts: ResolvedSandboxOptions, cg: CgroupSetup | null, reason: string) {
    super();
    this.#opts = opts;
    this.#cg = cg;
    this.runId = opts.runId;
    this.cgroupDriver = opts.cgroupDriver;
    this.fidelity = cg ? 'cgroup-pods' : 'uid-only';
    this.fidelityReason = reason;
    this.cgroupVersion = cg?.host.version ?? null;
    this.#temp = new RunTempFolder(opts.runId);
    this.#factory = new PodFactory(opts);
    this.#tracker = new PodTracker({ uidOnly: cg === null });
  }

  get bystanderPods(): number {
    return this.#opts.bystanders?.pods ?? 0;
  }

  get kubeletUrl(): string {
    return this.kubelet.url;
  }

  get #uidSettings() {
    return { uidMode: this.#opts.uidMode, bystandersUid: this.#opts.bystanders?.uid };
  }

  /** The first uid other than this process's that some pod runs as; null when all run as this one. */
  get #otherIds(): OsIds | null {
    return otherPodIds(this.#uidSettings)?.ids ?? null;
  }

  /**
   * A path to file that every pod's processes can read: the file itself, or, when some pods run as
   * another uid that cannot reach it (a checkout below a 0700 folder), a copy in the run's temp
   * folder, removed with the sandbox.
   */
  shareWithPods(file: string): string {
    return this.#temp.share(file, this.#otherIds);
  }

  async init(): Promise<void> {
    const otherUids = this.#otherIds !== null;
    if (otherUids && this.#cg?.host.version === 'v2') this.#setpriv = requireSetpriv();
    this.#temp.create(otherUids);
    const problem = podUidProblem(this.#uidSettings, this.#temp.dir);
    if (problem) throw new PlatformError(`sandbox.${problem}`);
    this.#temp.track(writeOwnerFile(this.runId));
    const k = this.#opts.kubelet;
    this.kubelet = await startKubeletEmulator({
      ...k,
      fillerPods: k.fillerPods ?? Math.max(0, (k.nodePods ?? DEFAULT_NODE_PODS) - this.#opts.pods - this.bystanderPods),
      podSource: () => this.#docs,
    });
    if (k.token !== undefined) this.tokenFile = this.#temp.write('kubelet-token', k.token);
    if (this.kubelet.caPem) this.caFile = this.#temp.write('kubelet-ca.crt', this.kubelet.caPem);
  }

  registerReaper(): void {
    this.#unregister = onCleanup(() => this.close());
  }

  pods(): SandboxPod[] {
    return this.#tracker.running().map((s) => s.pod);
  }

  async startPods(podMain: PodMain): Promise<void> {
    if (this.#closing) throw new RunError(`sandbox ${this.runId} is closed; create a new one to start pods`);
    if (this.#podMain) throw new RunError(`sandbox ${this.runId} already started its pods; call stopPods() first`);
    this.#podMain = podMain;
    this.#churning = this.#opts.podLifetimeMs !== undefined;
    try {
      // stopPods()/close() during the start (a SIGINT) ends the loop rather than starting more pods.
      const slots = this.#opts.pods + this.bystanderPods;
      for (let i = 0; i < slots && this.#podMain === podMain; i++) await this.#startPod(i);
    } catch (err) {
      await this.stopPods();
      throw err;
    }
  }

  async #startPod(index: number, extra?: { podMain: PodMain }): Promise<SandboxPod> {
    const podMain = extra?.podMain ?? this.#podMain!;
    const pod = this.#factory.newPod(index, extra !== undefined);
    if (this.#cg) placePodInCgroup(this.#cg, this.#opts, pod);
    const state = this.#tracker.add(pod, this.#factory.docFor(pod));
    this.#docs = this.#tracker.docs();
    let main: ChildProcess;
    try {
      main = podMain(pod);
      state.main = main;
      await new Promise<void>((resolve, reject) => {
        main.once('spawn', () => resolve());
        main.once('error', (err) => reject(new ChildProcessError(`pod ${pod.name}: main process failed to start: ${err.message}`, { cause: err })));
      });
    } catch (err) {
      await this.#endPod(state.pod);
      throw err instanceof ChildProcessError ? err : new ChildProcessError(`pod ${pod.name}: podMain failed: ${(err as Error).message}`, { cause: err });
    }
    // stopPods() may have run while the main process was starting: the pod is already ending.
    if (state.ending) return pod;
    main.once('exit', () => {
      // The main process ending on its own ends the pod; under churn a replacement takes its place,
      // after a back-off when it keeps dying young (the kubelet's CrashLoopBackOff, in small).
      // An extra pod's wave has a fixed size and end: it is not replaced.
      if (state.ending) return;
      if (pod.extra) return void this.#endPod(pod);
      const delay = this.#backoff.delayAfterExit(index, pod.startedAt);
      void this.#endPod(pod).then(() => this.#replace(index, delay));
    });
    // Churn replaces the storm's own pods only: bystanders run for the whole load phase, extra pods for their wave.
    if (this.#opts.podLifetimeMs !== undefined && pod.group === 'storm' && !pod.extra) {
      state.timer = setTimeout(() => {
        void this.#endPod(pod);
        void this.#replace(index);
      }, this.#opts.podLifetimeMs);
    }
    this.emit('pod-start', pod);
    return pod;
  }

  async addPods(count: number, podMain?: PodMain): Promise<SandboxPod[]> {
    const main = podMain ?? this.#podMain;
    if (!this.#accepting() || !main) throw new RunError(`sandbox ${this.runId} has no running pods to add to; call startPods() first`);
    if (!Number.isInteger(count) || count < 1) throw new RunError(`sandbox ${this.runId}: addPods needs a positive integer count, got ${count}`);
    const added: SandboxPod[] = [];
    try {
      // stopPods()/close() meanwhile (the load ending) ends the wave rather than starting more pods.
      for (let i = 0; i < count && this.#accepting(); i++) {
        const slot = this.#opts.pods + this.bystanderPods + this.#nextExtraSlot++;
        added.push(await this.#startPod(slot, { podMain: main }));
      }
    } catch (err) {
      await this.endPods(added);
      throw err;
    }
    return added;
  }

  /** Pods are running and more may start (between startPods and stopPods/close). */
  #accepting(): boolean {
    return this.#podMain !== null && this.#closing === null;
  }

  async endPods(pods: readonly SandboxPod[]): Promise<void> {
    await Promise.all(pods.map((p) => this.#endPod(p)));
  }

  async replacePods(count: number): Promise<void> {
    if (!this.#podMain || this.#closing) return;
    // A burst's extra pods have their own end (endPods): churn replaces the slotted pods.
    const victims = this.pods()
      .filter((p) => !p.extra)
      .slice(0, count);
    await Promise.all(
      victims.map(async (p) => {
        await this.#endPod(p);
        if (this.#podMain && !this.#closing) await this.#startPod(p.index);
      }),
    );
  }

  async #replace(index: number, delayMs = 0): Promise<void> {
    if (delayMs > 0 && this.#churning) await this.#backoff.wait(delayMs);
    if (!this.#churning || this.#closing || !this.#podMain) return;
    try {
      await this.#startPod(index);
    } catch (err) {
      process.stderr.write(`attestorm: sandbox ${this.runId}: replacement for pod slot ${index} failed: ${(err as Error).message}\n`);
    }
  }

  /** SIGTERM the pod's processes, SIGKILL after a grace period, remove its cgroup, emit pod-end. */
  #endPod(pod: SandboxPod): Promise<void> {
    const state = this.#tracker.get(pod.uid);
    if (!state) return Promise.resolve();
    if (!state.ending) {
      const removed = this.#tracker.markEnding(state);
      this.#docs = this.#tracker.docs();
      state.ending = (async () => {
        await this.#tracker.terminate(state);
        if (pod.cgroup) await removePodCgroups(this.#cg!, pod.cgroup);
        this.#tracker.remove(state);
        if (removed) this.emit('pod-end', pod);
      })();
    }
    return state.ending;
  }

  spawnInPod(pod: SandboxPod, command: string, args: readonly string[], options: SpawnOptions = {}): ChildProcess {
    const state = this.#tracker.get(pod.uid);
    if (!state || state.ending) throw new RunError(`pod ${pod.name} is not running in sandbox ${this.runId}`);
    const ctx = { runId: this.runId, kubeletUrl: this.kubeletUrl, tempDir: this.#temp.dir, setpriv: this.#setpriv };
    const child = spawnPodProcess(ctx, pod, command, args, options);
    this.#tracker.addProcess(state, child);
    return child;
  }

  async stopPods(): Promise<void> {
    this.#churning = false;
    this.#podMain = null;
    this.#backoff.reset();
    await Promise.all(this.#tracker.all().map((s) => this.#endPod(s.pod)));
    if (this.#cg) await removeKubepods(this.#cg, this.runId, this.cgroupDriver);
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      try {
        await this.stopPods();
      } finally {
        await this.kubelet?.close();
        this.#temp.remove();
        if (this.#cg) removeRunRoot(this.#cg, this.runId);
        this.#unregister();
      }
    })();
    return this.#closing;
  }
}

/** Validates opts (ConfigError), sets up cgroups, starts the kubelet emulator; starts no pods. */
export async function createSandbox(input: SandboxOptions): Promise<Sandbox> {
  const opts = parseSandboxOptions(input);
  const { setup, reason } = setUpCgroups(opts);
  const sandbox = new LocalSandbox(opts, setup, reason);
  sandbox.registerReaper();
  try {
    await sandbox.init();
  } catch (err) {
    await sandbox.close();
    throw err;
  }
  return sandbox;
}
