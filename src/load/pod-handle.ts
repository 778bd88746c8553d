// The generator's side of one pod process: typed messages, a start timeout, and the pod's fate
// (ready, done, exited) as promises.
import type { ChildProcess } from 'node:child_process';
import { ChildProcessError, SlowStartError } from '../errors.js';
import type { LoadPod } from './pod-host.js';
import type { FromPod, GoMessage, IntervalData, ToPod } from './worker/messages.js';

export class PodHandle {
  readonly pod: LoadPod;
  readonly child: ChildProcess;
  /** Worker PIDs once ready. */
  workerPids: number[] = [];
  /** Calls the pod reported in its final 'done'. */
  calls = 0;
  /** Load-phase CPU of the pod's workers (ms), from its final 'done'. */
  cpuMs = 0;
  /** Workers of this pod that crashed (died without reporting done), from its final 'done'. */
  crashes = 0;
  /** Its workers' longest time without a successful call, from its final 'done'; null until then. */
  longestOkGapMs: number | null = null;
  readonly ready: Promise<number[]>;
  /** Resolves when the pod reported done or its process exited, whichever first. */
  readonly finished: Promise<void>;
  /** Why the pod never became ready (timeout, crash, fatal start error); null otherwise. */
  failure: Error | null = null;
  /**
   * The pod was ended by its owner before it was ready (a churned pod, SIGTERM/SIGKILL or a quiet
   * exit 0): no error, a replacement takes its place.
   */
  endedBeforeReady = false;
  #isReady = false;
  #isFinished = false;

  constructor(
    pod: LoadPod,
    child: ChildProcess,
    startTimeoutMs: number,
    onInterval: (pod: LoadPod, data: IntervalData) => void,
    onProgress: (second: number) => void = () => {},
  ) {
    this.pod = pod;
    this.child = child;
    let markFinished!: () => void;
    this.finished = new Promise((resolve) => (markFinished = resolve));
    const finish = () => {
      this.#isFinished = true;
      markFinished();
    };
    this.ready = new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.failure ??= new SlowStartError(`pod ${pod.name}: its pod process and workers were not ready within ${startTimeoutMs} ms`);
        reject(this.failure);
      }, startTimeoutMs);
      child.once('error', (err) => {
        clearTimeout(timer);
        this.failure ??= new ChildProcessError(`pod ${pod.name}: could not start its pod process: ${err.message}`, { cause: err });
        reject(this.failure);
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        if (!this.#isReady && !this.failure) {
          if (code === 0 || signal === 'SIGTERM' || signal === 'SIGKILL') this.endedBeforeReady = true;
          else this.failure = new ChildProcessError(`pod ${pod.name}: its pod process exited before it was ready (${signal ?? `code ${code}`})`);
        }
        reject(this.failure ?? new ChildProcessError(`pod ${pod.name}: ended before it was ready`));
      });
      // 'close', not 'exit': messages still in the IPC pipe are delivered before 'close'.
      child.once('close', finish);
      child.on('message', (msg: FromPod) => {
        switch (msg.type) {
          case 'ready':
            clearTimeout(timer);
            this.#isReady = true;
            this.workerPids = msg.workerPids;
            resolve(msg.workerPids);
            break;
          case 'interval':
            onInterval(pod, msg.data);
            break;
          case 'progress':
            onProgress(msg.second);
            break;
          case 'done':
            this.calls = msg.calls;
            this.cpuMs = msg.cpuMs;
            this.longestOkGapMs = msg.longestOkGapMs;
            this.crashes = msg.crashes ?? 0;
            finish();
            break;
          case 'fatal':
            clearTimeout(timer);
            this.failure ??= new ChildProcessError(`pod ${pod.name}: ${msg.message}`);
            reject(this.failure);
            break;
        }
      });
    });
    // IPC write errors (a pod exiting as we stop it) are not failures of the run.
    child.on('error', () => {});
    // Rejections are read by whoever awaits ready; an unawaited replacement pod must not crash us.
    this.ready.catch(() => {});
  }

  get isReady(): boolean {
    return this.#isReady;
  }

  get isFinished(): boolean {
    return this.#isFinished;
  }

  #send(msg: ToPod): void {
    if (this.child.connected) this.child.send(msg, (err) => void err);
  }

  go(msg: GoMessage): void {
    this.#send(msg);
  }

  /** Workers stop after their call in flight and ship their last partial second. */
  stop(): void {
    this.#send({ type: 'stop' });
  }
}
