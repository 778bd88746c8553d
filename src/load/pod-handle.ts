// The generator's side of one pod process: typed messages, a start timeout, and the pod's fate
// (ready, done, exited) as promises.
import type { ChildProcess } from 'node:child_process';
import { ChildProcessError, TimeoutError } from '../errors.js';
import type { LoadPod } from './pod-host.js';
import type { FromPod, GoMessage, IntervalData, ToPod } from './worker/messages.js';

export class PodHandle {
  readonly pod: LoadPod;
  readonly child: ChildProcess;
  /** Worker PIDs once ready. */
  workerPids: number[] = [];
  /** Calls the pod reported in its final 'done'. */
  calls = 0;
  readonly ready: Promise<number[]>;
  /** Resolves when the pod reported done or its process exited, whichever first. */
  readonly finished: Promise<void>;
  #isReady = false;
  #isFinished = false;

  constructor(pod: LoadPod, child: ChildProcess, startTimeoutMs: number, onInterval: (pod: LoadPod, data: IntervalData) => void) {
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
        reject(new TimeoutError(`pod ${pod.name}: its pod process and workers were not ready within ${startTimeoutMs} ms`));
      }, startTimeoutMs);
      child.once('error', (err) => {
        clearTimeout(timer);
        reject(new ChildProcessError(`pod ${pod.name}: could not start its pod process: ${err.message}`, { cause: err }));
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new ChildProcessError(`pod ${pod.name}: its pod process exited before it was ready (${signal ?? `code ${code}`})`));
        finish();
      });
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
          case 'done':
            this.calls = msg.calls;
            finish();
            break;
          case 'fatal':
            clearTimeout(timer);
            reject(new ChildProcessError(`pod ${pod.name}: ${msg.message}`));
            break;
        }
      });
    });
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
