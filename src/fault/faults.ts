// Runs a scenario's fault schedule against one target: each fault starts at load start + `at`,
// windowed ones end at `at + for` (or at once on stop/abort, which undoes everything still in force),
// every start and end is an event, and each fault's recovery is measured after it ends.
import { setMaxListeners } from 'node:events';
import { FaultNotApplied, type StartedFault } from './action.js';
import { FAULT_STARTERS } from './actions.js';
import type { Fault } from './schema.js';
import type { FaultRecord } from '../contract/index.js';
import type { BystanderSecond, FaultEvent, FaultTarget } from './fault-target.js';

export interface FaultSchedulerOptions {
  faults: readonly Fault[];
  target: FaultTarget;
  /** Date.now() of the load phase's start: every `at` counts from here. */
  loadStart: number;
  /** Called for every fault start and end (write it to samples.ndjson). Must not throw. */
  onEvent?(event: FaultEvent): void;
  /** Aborting it stops the schedule as stop() does. */
  signal?: AbortSignal;
}

/** End details that add nothing to the record's detail (the start already said it all). */
const INSTANT_END = 'instantaneous';
const NOT_APPLIED_END = 'not applied';
const END_WITHOUT_NEWS = new Set([INSTANT_END, NOT_APPLIED_END]);

interface FaultState {
  index: number;
  fault: Fault;
  record: Omit<FaultRecord, 'rep'>;
  run: Promise<void> | null;
  probe: Promise<void> | null;
}

export class FaultScheduler {
  readonly #opts: FaultSchedulerOptions;
  readonly #states: FaultState[];
  /** Wakes every wait: pending faults are dropped, windowed ones end now. */
  readonly #wake = new AbortController();
  readonly #probeAbort = new AbortController();
  readonly #bystanders: BystanderSecond[] = [];
  #started = false;
  readonly #onAbort = () => void this.stop();
  #stopped: Promise<Omit<FaultRecord, 'rep'>[]> | null = null;

  constructor(opts: FaultSchedulerOptions) {
    this.#opts = opts;
    // Every pending fault and every recovery probe waits on these: one listener each, by design.
    setMaxListeners(0, this.#wake.signal, this.#probeAbort.signal);
    this.#states = opts.faults.map((fault, index) => ({
      index,
      fault,
      run: null,
      probe: null,
      record: {
        action: fault.action,
        atMs: fault.at,
        forMs: fault.for ?? null,
        startedAtMs: null,
        endedAtMs: null,
        detail: '',
        recovery: { agentReadyMs: null, bystanderOkMs: null, callsLost: null },
      },
    }));
  }

  /** Schedules every fault. Call once, right after the load phase started. */
  start(): void {
    if (this.#started) throw new Error('FaultScheduler.start() called twice');
    this.#started = true;
    const signal = this.#opts.signal;
    if (signal?.aborted) return void this.stop();
    signal?.addEventListener('abort', this.#onAbort, { once: true });
    for (const st of this.#states) st.run = this.#run(st);
  }

  /** The bystanders' counts of one second, as the runner aggregates them (recovery is computed from these). */
  bystanderSecond(second: BystanderSecond): void {
    this.#bystanders.push({ ...second });
  }

  /**
   * Ends the schedule: faults not started yet never start, windowed faults in force end now (limits
   * restored, cgroup thawed, connections closed, kubelet faults cleared), recovery probes give up.
   * Idempotent; resolves with the records. Call it before the agent's supervisor stops the agent.
   */
  stop(): Promise<Omit<FaultRecord, 'rep'>[]> {
    this.#stopped ??= (async () => {
      this.#opts.signal?.removeEventListener('abort', this.#onAbort);
      this.#wake.abort();
      await Promise.allSettled(this.#states.map((s) => s.run));
      this.#probeAbort.abort();
      await Promise.allSettled(this.#states.map((s) => s.probe));
      return this.records();
    })();
    return this.#stopped;
  }

  /** Every fault's record so far (the runner adds the repetition), with bystander recovery computed from the seconds fed until now. */
  records(): Omit<FaultRecord, 'rep'>[] {
    return this.#states.map((s) => {
      const r = { ...s.record, recovery: { ...s.record.recovery } };
      if (r.startedAtMs !== null && r.endedAtMs !== null && this.#bystanders.length > 0) Object.assign(r.recovery, this.#bystanderRecovery(r));
      return r;
    });
  }

  #t(): number {
    return Date.now() - this.#opts.loadStart;
  }

  /** A start event carries the time the action began (a kill's starter returns only after the death). */
  #emit(st: FaultState, type: FaultEvent['type'], detail: string): void {
    const d = `faults[${st.index}] ${st.fault.action}: ${detail}`;
    if (!END_WITHOUT_NEWS.has(detail)) st.record.detail = st.record.detail ? `${st.record.detail}; ${detail}` : detail;
    const t = type === 'fault-start' ? st.record.startedAtMs! : this.#t();
    try {
      this.#opts.onEvent?.({ type, index: st.index, action: st.fault.action, t, detail: d });
    } catch {
      // The runner's writer failing must not leave a fault in force.
    }
  }

  async #run(st: FaultState): Promise<void> {
    const f = st.fault;
    await this.#sleepUntil(this.#opts.loadStart + f.at);
    if (this.#wake.signal.aborted) return;
    st.record.startedAtMs = this.#t();
    let started: StartedFault;
    try {
      const starter = this.#opts.target.actions?.[f.action] ?? FAULT_STARTERS[f.action];
      started = await (starter as (f: Fault, t: FaultTarget) => Promise<StartedFault>)(f, this.#opts.target);
    } catch (err) {
      const why = err instanceof FaultNotApplied ? err.message : `failed: ${(err as Error).message}`;
      st.record.error = why;
      this.#emit(st, 'fault-start', `not applied: ${why}`);
      st.record.endedAtMs = this.#t();
      this.#emit(st, 'fault-end', NOT_APPLIED_END);
      return;
    }
    this.#emit(st, 'fault-start', started.detail);
    let endDetail = INSTANT_END;
    if (started.end) {
      await this.#sleepUntil(this.#opts.loadStart + f.at + (f.for ?? 0));
      const early = this.#wake.signal.aborted && Date.now() < this.#opts.loadStart + f.at + (f.for ?? 0);
      try {
        endDetail = await started.end();
      } catch (err) {
        st.record.error = `could not undo: ${(err as Error).message}`;
        endDetail = st.record.error;
      }
      if (early) endDetail += ' (ended early: the load phase stopped)';
    }
    st.record.endedAtMs = this.#t();
    this.#emit(st, 'fault-end', endDetail);
    if (!this.#wake.signal.aborted) this.#measureAgentRecovery(st, Date.now());
  }

  #measureAgentRecovery(st: FaultState, endedAt: number): void {
    st.probe = this.#opts.target.waitAgentAnswers(this.#probeAbort.signal).then(
      () => {
        st.record.recovery.agentReadyMs = Date.now() - endedAt;
      },
      () => {
        // Gave up at stop: the agent did not answer before the load ended.
      },
    );
  }

  /**
   * From the bystander seconds: when they succeeded again after the fault ended, and what failed
   * meanwhile. A second is known only as a whole, so the second holding the end counts when every
   * call in it succeeded (0 ms), or when it had successes and the agent answered the probe within it
   * (its end: an upper bound). Otherwise it is the end of the first later second with a success.
   */
  #bystanderRecovery(r: Omit<FaultRecord, 'rep'>): { bystanderOkMs: number | null; callsLost: number } {
    const endedAtMs = r.endedAtMs!;
    const agentAt = r.recovery.agentReadyMs === null ? null : endedAtMs + r.recovery.agentReadyMs;
    const at = this.#bystanders.findIndex((s) => s.t > endedAtMs);
    const first = at >= 0 ? this.#bystanders[at]! : null;
    let okMs: number | null = null;
    let until = Infinity;
    if (first && first.calls > 0 && first.ok === first.calls) {
      okMs = 0;
      until = first.t;
    } else if (first && first.ok > 0 && agentAt !== null && agentAt <= first.t) {
      okMs = first.t - endedAtMs;
      until = first.t;
    } else if (at >= 0) {
      const later = this.#bystanders.slice(at + 1).find((s) => s.ok > 0);
      if (later) {
        okMs = later.t - endedAtMs;
        until = later.t;
      }
    }
    let lost = 0;
    for (const s of this.#bystanders) if (s.t > r.startedAtMs! && s.t <= until) lost += Math.max(0, s.calls - s.ok);
    return { bystanderOkMs: okMs, callsLost: lost };
  }

  /** Waits until the wall-clock time `at`, or until stop. */
  #sleepUntil(at: number): Promise<void> {
    const signal = this.#wake.signal;
    return new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      let t: NodeJS.Timeout;
      // Timers run on the event loop's cached clock and can fire a millisecond before Date.now()
      // reaches `at` (seen on a loaded machine): wait out the rest, so no window ends early.
      const arm = () => (t = setTimeout(() => (Date.now() < at ? arm() : done()), Math.max(0, at - Date.now())));
      function done() {
        clearTimeout(t);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
      arm();
    });
  }
}
