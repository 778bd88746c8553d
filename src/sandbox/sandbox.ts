// The local pod sandbox: pods with Kubernetes identities whose processes live in real cgroups named
// the way the kubelet names them, a kubelet emulator serving them, churn, and the owner that reaps it all.
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { Cgroup, procsFiles, removeIfEmpty, removeTree, spawnInCgroup } from '../cgroup/index.js';
import { setUpCgroups, type CgroupSetup } from './sandbox-cgroups.js';
import { ChildProcessError, PlatformError, RunError } from '../errors.js';
import { onCleanup } from '../util/index.js';
import { startKubeletEmulator, type KubeletEmulator } from './kubelet-emulator.js';
import { BYSTANDER_UID_BASE, DEFAULT_NODE_PODS, parseSandboxOptions, PER_POD_UID_BASE, type ResolvedSandboxOptions, type SandboxOptions } from './options.js';
import { buildPodDoc, type PodDoc } from './pod-doc.js';
import { containerCgroupRel, kubepodsDir, type CgroupDriver } from './pod-cgroup-path.js';
import { containerNameFor, imageIdFor, newPodUid, podIpFor, randomContainerId, randomSuffix, seededUuid } from './pod-identity.js';
import { runCgroupRel, runTempDir, writeOwnerFile } from './run-id.js';
import { PodTracker } from './pod-tracker.js';
import type { PodGroup, SandboxPod } from './sandbox-pod.js';
import { otherPodIds, podUidProblem, unreachableFor, type OsIds } from './uid-reach.js';

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

// A replacement for a main process that died within CRASH_AGE_MS waits 0.5 s, 1 s, 2 s ... up to 10 s.
const CRASH_AGE_MS = 2000;
const CRASH_BACKOFF_MS = 500;
const CRASH_BACKOFF_MAX_MS = 10_000;

// Bystanders look like any other workload of the node: their own app label, service account and image.
const BYSTANDER_LABELS: Record<string, string> = { app: 'bystander' };
const BYSTANDER_SERVICE_ACCOUNT = 'bystander';
const BYSTANDER_IMAGE = 'registry.local/bystander:1.0';

const QOS_NAMES = { besteffort: 'BestEffort', burstable: 'Burstable', guaranteed: 'Guaranteed' } as const;

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
  readonly #tempDir: string;
  readonly #tempFiles: string[] = [];
  readonly #rsName: string;
  readonly #rsUid: string;
  readonly #bystanderRsName: string;
  readonly #bystanderRsUid: string;
  #docs: PodDoc[] = [];
  #podMain: PodMain | null = null;
  #churning = false;
  #serial = 0;
  /** Next slot index for an extra pod (addPods): slots are never reused. */
  #nextExtraSlot = 0;
  #closing: Promise<void> | null = null;
  /** Consecutive young deaths per pod slot, and the pending back-off waits (cleared by stopPods). */
  readonly #crashes = new Map<number, number>();
  readonly #backoffs = new Map<NodeJS.Timeout, () => void>();
  #unregister: () => void = () => {};
  /** Path of setpriv when pods change uid on cgroup v2 (see spawnInPod). */
  #setpriv: string | null = null;
  /** Copies of files for pods of another uid (shareWithPods), by original path. */
  readonly #shared = new Map<string, string>();

  constructor(opts: ResolvedSandboxOptions, cg: CgroupSetup | null, reason: string) {
    super();
    this.#opts = opts;
    this.#cg = cg;
    this.runId = opts.runId;
    this.cgroupDriver = opts.cgroupDriver;
    this.fidelity = cg ? 'cgroup-pods' : 'uid-only';
    this.fidelityReason = reason;
    this.cgroupVersion = cg?.host.version ?? null;
    this.#tempDir = runTempDir(opts.runId);
    this.#rsName = `${containerNameFor(opts.labels)}-${randomSuffix(10)}`;
    this.#rsUid = seededUuid(`${opts.runId}/${this.#rsName}`);
    this.#bystanderRsName = `${containerNameFor(BYSTANDER_LABELS)}-${randomSuffix(10)}`;
    this.#bystanderRsUid = seededUuid(`${opts.runId}/${this.#bystanderRsName}`);
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
    const ids = this.#otherIds;
    if (!ids || unreachableFor(file, ids) === null) return file;
    let copy = this.#shared.get(file);
    if (!copy) {
      copy = join(this.#tempDir, basename(file));
      copyFileSync(file, copy);
      chmodSync(copy, 0o644);
      this.#tempFiles.push(copy);
      this.#shared.set(file, copy);
    }
    return copy;
  }

  async init(): Promise<void> {
    const otherUids = this.#otherIds !== null;
    if (otherUids && this.#cg?.host.version === 'v2') {
      this.#setpriv = findInPath('setpriv');
      if (!this.#setpriv) throw new PlatformError('sandbox.uidMode "per-pod" and sandbox.bystanders.uid "own" on cgroup v2 need setpriv (util-linux) in PATH to start pod processes as their uid');
    }
    mkdirSync(this.#tempDir, { recursive: true, mode: 0o755 });
    // Whatever the umask: pods of another uid load their bundles from here (shareWithPods). The
    // shared temp root too, where this user made it (a umask of 077 would close it).
    chmodSync(this.#tempDir, 0o755);
    if (statSync(dirname(this.#tempDir)).uid === process.getuid?.()) chmodSync(dirname(this.#tempDir), 0o755);
    const problem = podUidProblem(this.#uidSettings, this.#tempDir);
    if (problem) throw new PlatformError(`sandbox.${problem}`);
    this.#tempFiles.push(writeOwnerFile(this.runId));
    const k = this.#opts.kubelet;
    this.kubelet = await startKubeletEmulator({
      ...k,
      fillerPods: k.fillerPods ?? Math.max(0, (k.nodePods ?? DEFAULT_NODE_PODS) - this.#opts.pods - this.bystanderPods),
      podSource: () => this.#docs,
    });
    if (k.token !== undefined) this.tokenFile = this.#writeTemp('kubelet-token', k.token);
    if (this.kubelet.caPem) this.caFile = this.#writeTemp('kubelet-ca.crt', this.kubelet.caPem);
  }

  registerReaper(): void {
    this.#unregister = onCleanup(() => this.close());
  }

  #writeTemp(name: string, content: string): string {
    const file = join(this.#tempDir, name);
    // World-readable: an agent under test may run as another user and must read the token and CA.
    writeFileSync(file, content, { mode: 0o644 });
    this.#tempFiles.push(file);
    return file;
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

  #newPod(index: number, extra: boolean): SandboxPod {
    const o = this.#opts;
    const uid = newPodUid();
    const containerId = randomContainerId();
    const group: PodGroup = index < o.pods || extra ? 'storm' : 'bystanders';
    const labels = group === 'storm' ? { ...o.labels } : { ...BYSTANDER_LABELS };
    const image = group === 'storm' ? o.image : BYSTANDER_IMAGE;
    const { uid: osUid, gid: osGid } = this.#osIds(group, index);
    const pod: SandboxPod = {
      index,
      group,
      uid,
      name: `${group === 'storm' ? this.#rsName : this.#bystanderRsName}-${randomSuffix(5)}`,
      namespace: o.namespace,
      serviceAccount: group === 'storm' ? o.serviceAccount : BYSTANDER_SERVICE_ACCOUNT,
      labels,
      containerName: containerNameFor(labels),
      containerId,
      image,
      imageId: imageIdFor(image),
      osUid,
      osGid,
      cgroup: null,
      startedAt: Date.now(),
      ...(extra ? { extra: true } : {}),
    };
    if (this.#cg) {
      const rel = `${runCgroupRel(this.runId)}/${containerCgroupRel(o.cgroupDriver, o.qosClass, uid, containerId)}`;
      pod.cgroup = Cgroup.create(this.#cg.host, rel, { cpu: this.#cg.host.cpuBase !== null });
      pod.cpuGroup = pod.cgroup.cpuPath !== null;
      // A process moves itself into the container cgroup before exec (spawnInCgroup), already as
      // the pod's uid: the procs files must be writable by that uid, as in cgroup delegation.
      const asOther = pod.osUid !== process.getuid?.() || pod.osGid !== process.getgid?.();
      if (asOther && pod.cgroup.version === 'v1') for (const f of procsFiles(pod.cgroup)) chownSync(f, pod.osUid, pod.osGid);
    }
    return pod;
  }

  /**
   * Storm pods: the process's ids, or 20000+i per pod. Bystanders: the storm's ids (uid "same", pod
   * 0's under per-pod, so an os-uid limiter key puts them in a storm pod's bucket), or 30000+j.
   */
  #osIds(group: PodGroup, index: number): { uid: number; gid: number } {
    const o = this.#opts;
    if (group === 'bystanders' && o.bystanders?.uid === 'own') {
      const id = BYSTANDER_UID_BASE + index - o.pods;
      return { uid: id, gid: id };
    }
    const slot = group === 'storm' ? index : 0;
    if (o.uidMode === 'per-pod') return { uid: PER_POD_UID_BASE + slot, gid: PER_POD_UID_BASE + slot };
    return { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
  }

  async #startPod(index: number, extra?: { podMain: PodMain }): Promise<SandboxPod> {
    const podMain = extra?.podMain ?? this.#podMain!;
    const pod = this.#newPod(index, extra !== undefined);
    const storm = pod.group === 'storm';
    const doc = buildPodDoc({
      name: pod.name,
      namespace: pod.namespace,
      uid: pod.uid,
      labels: pod.labels,
      owner: storm ? { kind: 'ReplicaSet', name: this.#rsName, uid: this.#rsUid } : { kind: 'ReplicaSet', name: this.#bystanderRsName, uid: this.#bystanderRsUid },
      nodeName: this.#opts.kubelet.nodeName,
      serviceAccount: pod.serviceAccount,
      containers: [{ name: pod.containerName, image: pod.image, imageID: pod.imageId, containerID: pod.containerId }],
      qosClass: QOS_NAMES[this.#opts.qosClass],
      podIP: podIpFor(this.#serial++ % 60_000),
      hostIP: '192.168.10.10',
      startedAt: pod.startedAt,
      extraEnv: 24,
    });
    const state = this.#tracker.add(pod, doc);
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
      const young = Date.now() - pod.startedAt < CRASH_AGE_MS;
      const crashes = young ? (this.#crashes.get(index) ?? 0) + 1 : 0;
      this.#crashes.set(index, crashes);
      const delay = crashes === 0 ? 0 : Math.min(CRASH_BACKOFF_MAX_MS, CRASH_BACKOFF_MS * 2 ** (crashes - 1));
      void this.#endPod(pod).then(() => this.#replace(index, delay));
    });
    // Churn replaces the storm's own pods only: bystanders run for the whole load phase, extra pods for their wave.
    if (this.#opts.podLifetimeMs !== undefined && storm && !pod.extra) {
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
    const victims = this.pods().filter((p) => !p.extra).slice(0, count);
    await Promise.all(
      victims.map(async (p) => {
        await this.#endPod(p);
        if (this.#podMain && !this.#closing) await this.#startPod(p.index);
      }),
    );
  }

  async #replace(index: number, delayMs = 0): Promise<void> {
    if (delayMs > 0 && this.#churning) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          this.#backoffs.delete(t);
          resolve();
        }, delayMs);
        this.#backoffs.set(t, resolve);
      });
    }
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
        if (pod.cgroup) await removeTree(join(this.#cg!.host.memoryBase, dirname(pod.cgroup.relPath)));
        if (pod.cgroup?.cpuPath) await removeTree(dirname(pod.cgroup.cpuPath));
        this.#tracker.remove(state);
        if (removed) this.emit('pod-end', pod);
      })();
    }
    return state.ending;
  }

  spawnInPod(pod: SandboxPod, command: string, args: readonly string[], options: SpawnOptions = {}): ChildProcess {
    const state = this.#tracker.get(pod.uid);
    if (!state || state.ending) throw new RunError(`pod ${pod.name} is not running in sandbox ${this.runId}`);
    const env = {
      // As with spawn(): a given env replaces the inherited one.
      ...(options.env ?? process.env),
      ATTESTORM_RUN_ID: this.runId,
      ATTESTORM_POD_UID: pod.uid,
      ATTESTORM_POD_NAME: pod.name,
      ATTESTORM_POD_NAMESPACE: pod.namespace,
      ATTESTORM_POD_INDEX: String(pod.index),
      ATTESTORM_POD_GROUP: pod.group,
      ATTESTORM_POD_SERVICE_ACCOUNT: pod.serviceAccount,
      ATTESTORM_CONTAINER_ID: pod.containerId,
      ATTESTORM_KUBELET_URL: this.kubeletUrl,
    };
    const asOther = pod.osUid !== process.getuid?.() || pod.osGid !== process.getgid?.();
    // A process group of its own: in uid-only fidelity the group is how the pod's tree is found.
    // A pod of another uid starts in the run's temp folder: the inherited folder may be closed to it.
    const spawnOpts: SpawnOptions = { ...(asOther ? { cwd: this.#tempDir } : {}), ...options, env, detached: true };
    let child: ChildProcess;
    if (asOther && pod.cgroup?.version === 'v2') {
      // v2 lets a process move itself only with write access to the common ancestor's cgroup.procs:
      // it moves as root, then setpriv drops to the pod's uid/gid before exec'ing the command.
      const ids = ['--reuid', String(pod.osUid), '--regid', String(pod.osGid), '--clear-groups', '--'];
      child = spawnInCgroup(pod.cgroup, this.#setpriv!, [...ids, command, ...args], spawnOpts);
    } else {
      child = spawnInCgroup(pod.cgroup, command, args, asOther ? { ...spawnOpts, uid: pod.osUid, gid: pod.osGid } : spawnOpts);
    }
    this.#tracker.addProcess(state, child);
    return child;
  }

  async stopPods(): Promise<void> {
    this.#churning = false;
    this.#podMain = null;
    for (const [t, resolve] of this.#backoffs) {
      clearTimeout(t);
      resolve();
    }
    this.#backoffs.clear();
    this.#crashes.clear();
    await Promise.all(this.#tracker.all().map((s) => this.#endPod(s.pod)));
    if (this.#cg) {
      const sub = join(runCgroupRel(this.runId), kubepodsDir(this.cgroupDriver));
      await removeTree(join(this.#cg.host.memoryBase, sub));
      if (this.#cg.host.cpuBase) await removeTree(join(this.#cg.host.cpuBase, sub));
    }
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      try {
        await this.stopPods();
      } finally {
        await this.kubelet?.close();
        for (const f of this.#tempFiles) rmSync(f, { force: true });
        tryRmdir(this.#tempDir);
        if (this.#cg) {
          // Only what this sandbox made: the run root goes when empty; another component of the
          // same run (an agent's cgroup) keeps it, and that component's owner removes it.
          for (const base of [this.#cg.host.memoryBase, this.#cg.host.cpuBase]) {
            if (!base) continue;
            removeIfEmpty(join(base, runCgroupRel(this.runId)));
            removeIfEmpty(join(base, 'attestorm'));
          }
        }
        this.#unregister();
      }
    })();
    return this.#closing;
  }
}

function findInPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(':')) {
    const p = join(dir || '.', name);
    if (existsSync(p)) return p;
  }
  return null;
}

function tryRmdir(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // Not empty (someone else's part of the run) or already gone.
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
