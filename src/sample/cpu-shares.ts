// Who held a storm back, from CPU shares: the generator (its pods' processes and the runner), the
// agent under test, or the machine as a whole. A closed-loop storm offers what its workers can send;
// when the generator's processes took all the CPU they could get while the agent had CPU to spare,
// the generator, not the agent, set the offered rate.
import { cpus } from 'node:os';

/** Cumulative CPU seconds of one process or cgroup, read over time: CPU in cores over any window. */
export class CumulativeCpuSeries {
  readonly #points: Array<{ t: number; s: number }> = [];
  readonly #keepMs: number;

  /** `keepMs`: how far back windows are asked for (older readings are dropped). */
  constructor(keepMs = 30_000) {
    this.#keepMs = keepMs;
  }

  /** A reading at t (ms); a drop (a restarted agent counts from 0 again) starts a new run of readings. */
  add(t: number, seconds: number): void {
    const last = this.#points[this.#points.length - 1];
    if (last && seconds < last.s) this.#points.length = 0;
    this.#points.push({ t, s: seconds });
    while (this.#points.length > 2 && this.#points[0]!.t < t - this.#keepMs) this.#points.shift();
  }

  /** Cores used over [a, b): the readings nearest inside the window; null with fewer than two there. */
  coresBetween(a: number, b: number): number | null {
    const inside = this.#points.filter((p) => p.t >= a - 150 && p.t <= b + 150);
    if (inside.length < 2) return null;
    const first = inside[0]!;
    const last = inside[inside.length - 1]!;
    if (last.t - first.t < 200) return null;
    return (last.s - first.s) / ((last.t - first.t) / 1000);
  }
}

/** Mean CPU over a load phase, in cores, and where each side could run. */
export interface CpuShares {
  /** The generator's pod processes and workers. */
  generatorCores: number | null;
  /** The runner process (part of the harness, on the generator's CPUs). */
  runnerCores: number | null;
  agentCores: number | null;
  machineBusyCores: number | null;
  /** CPUs of the machine. */
  cores?: number;
  /** CPUs the agent has to itself (isolation); null when it shares every CPU with the harness. */
  agentCpus: number | null;
}

export interface StormLimit {
  by: 'generator' | 'agent' | 'machine';
  /** The numbers that say so. */
  detail: string;
}

/** A side is at its limit when it used this share of the CPU it could get. */
export const SATURATED = 0.85;

const c = (x: number) => x.toFixed(2);

/**
 * Who limited the storm's CPU, or null when nobody was at a CPU limit (the storm's own shape —
 * workers, deadlines, the agent's latency — set its rate) or the figures are missing.
 */
export function stormLimit(s: CpuShares): StormLimit | null {
  const cores = s.cores ?? cpus().length;
  if (s.generatorCores === null || s.agentCores === null) return null;
  const harness = s.generatorCores + (s.runnerCores ?? 0);
  const agent = s.agentCores;
  const harnessText = `the generator's processes used ${c(s.generatorCores)} cores${s.runnerCores !== null ? ` and the runner ${c(s.runnerCores)}` : ''}`;
  if (s.agentCpus !== null) {
    const room = cores - s.agentCpus;
    // Other processes (not pinned) run on every CPU: their part of the generator's CPUs, spread evenly.
    const others = s.machineBusyCores === null ? 0 : Math.max(0, s.machineBusyCores - harness - agent);
    const othersThere = (others * room) / cores;
    const genFull = room > 0 && harness + othersThere >= SATURATED * room;
    const agentFull = agent >= SATURATED * s.agentCpus;
    const crowded = othersThere >= 0.25 * room ? ` (other processes took about ${c(othersThere)} of them)` : '';
    const text = `${harnessText} of the ${room} CPU${room === 1 ? '' : 's'} left to them${crowded}, the agent ${c(agent)} of its ${s.agentCpus}`;
    if (genFull && !agentFull) return { by: 'generator', detail: text };
    if (agentFull && !genFull) return { by: 'agent', detail: text };
    if (agentFull && genFull) return { by: 'machine', detail: `${text}: both at their CPUs' limit` };
    return null;
  }
  // Shared CPUs: a busy machine was held back by whichever side took the larger part of it.
  const busy = s.machineBusyCores ?? harness + agent;
  const text = `${harnessText}, the agent ${c(agent)}, with ${c(busy)} of the machine's ${cores} cores busy`;
  if (busy < SATURATED * cores) return null;
  const others = Math.max(0, busy - harness - agent);
  if (others > harness && others > agent) return { by: 'machine', detail: `${text} (${c(others)} by other processes)` };
  if (harness > agent) return { by: 'generator', detail: text };
  return { by: 'agent', detail: text };
}
