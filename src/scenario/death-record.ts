// What one death of the agent means for the results, decided once for every platform: the contract's
// `counted` is "counts for oomKills" — an OOM kill (the kernel's, or the emulated one) in the load
// phase, or outside it when the scenario says so. A fault's kill, a signal or an exit never counts.
import type { DeathRecord, Phase } from '../contract/index.js';

export type DeathCause = DeathRecord['cause'];

/** Whether a death counts for oomKills. */
export function countsAsOomKill(cause: DeathCause, phase: Phase, outsideLoad: 'count' | 'ignore'): boolean {
  return (cause === 'oom-kill' || cause === 'emulated-oom') && (phase === 'load' || outsideLoad === 'count');
}

export function deathRecord(d: Omit<DeathRecord, 'counted'>, outsideLoad: 'count' | 'ignore'): DeathRecord {
  return { ...d, counted: countsAsOomKill(d.cause, d.phase, outsideLoad) };
}

/** A repetition's oomKills: its counted deaths. */
export function oomKillsOf(deaths: readonly DeathRecord[]): number {
  return deaths.filter((d) => d.counted).length;
}
