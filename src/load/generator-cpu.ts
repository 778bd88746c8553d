// The generator's own CPU, second by second of the load: its pod processes and workers (summed from
// /proc/<pid>/stat), the runner process (this one), and the whole machine (/proc/stat). Read at each
// second's end, so every second of the rate series carries the CPU that produced it, and a storm the
// generator could not offer is seen as such.
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { readMachineCpu, type MachineCpuReading } from '../sample/index.js';
import { statCpuSeconds } from '../util/procfs-stat.js';

/** One second's CPU, in cores (CPU seconds per second); null where it could not be read. */
export interface GeneratorCpuSecond {
  /** The pod processes and their workers. */
  generatorCores: number | null;
  /** The process running the generator (merging the pods' seconds, sampling, the runner's work). */
  runnerCores: number | null;
  /** Every process on the machine. */
  machineBusyCores: number | null;
}

function readOr<T>(path: string, parse: (text: string) => T | null): T | null {
  try {
    return parse(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
}

/**
 * Samples at t0 + k s (k = 1, 2, …) until stopped. A process that exits keeps what it had used (its
 * last reading is simply not advanced); a PID seen for the first time counts from its first reading.
 */
export class GeneratorCpuMeter {
  readonly #pids: () => readonly number[];
  readonly #cores: number;
  readonly #seconds = new Map<number, GeneratorCpuSecond>();
  readonly #lastByPid = new Map<number, number>();
  #timer: NodeJS.Timeout | undefined;
  #t0 = 0;
  #prev: { atMs: number; runnerUs: number; machine: MachineCpuReading | null } | null = null;
  /** Generator CPU seconds counted since start (every second's deltas). */
  #generatorSeconds = 0;
  #runnerSeconds = 0;
  #machineBusySeconds = 0;
  #machineMeasured = false;
  #elapsedMs = 0;

  /** `pids`: the generator's processes right now (pod processes and workers). */
  constructor(pids: () => readonly number[], cores = cpus().length) {
    this.#pids = pids;
    this.#cores = cores;
  }

  start(t0: number): void {
    this.#t0 = t0;
    this.#readProcesses();
    this.#prev = this.#snapshot(t0);
    this.#schedule(1);
  }

  #schedule(k: number): void {
    this.#timer = setTimeout(
      () => {
        this.sampleSecond(k - 1);
        this.#schedule(k + 1);
      },
      Math.max(0, this.#t0 + k * 1000 - Date.now()),
    );
    this.#timer.unref();
  }

  #snapshot(atMs: number) {
    const u = process.cpuUsage();
    return { atMs, runnerUs: u.user + u.system, machine: readMachineCpu() };
  }

  /** CPU seconds the generator's processes used since the last reading (summed over PIDs). */
  #readProcesses(): number {
    let used = 0;
    for (const pid of this.#pids()) {
      const now = readOr(`/proc/${pid}/stat`, statCpuSeconds);
      if (now === null) continue;
      const last = this.#lastByPid.get(pid);
      if (last !== undefined && now >= last) used += now - last;
      this.#lastByPid.set(pid, now);
    }
    return used;
  }

  /** Closes second `k` (its CPU from the previous reading to now); called by the timer, and once more at stop. */
  sampleSecond(k: number): void {
    const prev = this.#prev;
    if (!prev) return;
    const now = this.#snapshot(Date.now());
    const wallS = (now.atMs - prev.atMs) / 1000;
    const generator = this.#readProcesses();
    if (wallS <= 0.05) return;
    const runner = (now.runnerUs - prev.runnerUs) / 1e6;
    const m =
      prev.machine && now.machine && now.machine.total > prev.machine.total
        ? ((now.machine.busy - prev.machine.busy) / (now.machine.total - prev.machine.total)) * this.#cores
        : null;
    this.#seconds.set(k, { generatorCores: generator / wallS, runnerCores: runner / wallS, machineBusyCores: m });
    this.#generatorSeconds += generator;
    this.#runnerSeconds += runner;
    if (m !== null) {
      this.#machineBusySeconds += m * wallS;
      this.#machineMeasured = true;
    }
    this.#elapsedMs += now.atMs - prev.atMs;
    this.#prev = now;
  }

  /** Second k's CPU (k counts from t0); undefined when not sampled (yet). */
  second(k: number): GeneratorCpuSecond | undefined {
    return this.#seconds.get(k);
  }

  /** Means over everything sampled, in cores; null before a whole second was sampled. */
  means(): GeneratorCpuSecond | null {
    if (this.#elapsedMs <= 0) return null;
    const s = this.#elapsedMs / 1000;
    return {
      generatorCores: this.#generatorSeconds / s,
      runnerCores: this.#runnerSeconds / s,
      machineBusyCores: this.#machineMeasured ? this.#machineBusySeconds / s : null,
    };
  }

  /** Stops the timer after closing the second in progress (the load's last, partial one). */
  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const k = Math.floor((Date.now() - this.#t0) / 1000);
    if (this.#prev && k >= 0 && !this.#seconds.has(k)) this.sampleSecond(k);
  }
}
