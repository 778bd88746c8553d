// Evaluating a scenario's `expect` block against the aggregated placement results: each rule gives
// one ExpectationResult naming what was expected, what was measured, and whether it held.
import { formatMiB, parseBytes } from '../util/index.js';
import type { ExpectationResult, PlacementResult } from './results.js';
import type { ExpectInput } from './schema.js';

type Ratio = { to: string; value: number };

const mib = (b: number) => formatMiB(b);
const rps = (n: number) => `${n.toFixed(1)}/s`;

function result(name: string, expected: unknown, actual: unknown, passed: boolean, message: string): ExpectationResult {
  return { name, expected, actual, passed, message };
}

/** A placement killed by the OOM killer peaked at its limit, whatever the last sample said. */
export function effectivePeak(p: Pick<PlacementResult, 'peakMemoryBytes' | 'memoryLimitBytes' | 'oomKills'>): number {
  return p.oomKills > 0 ? Math.max(p.peakMemoryBytes, p.memoryLimitBytes) : p.peakMemoryBytes;
}

function ratioCheck(kind: 'maxPeakRatio' | 'minPeakRatio', r: Ratio, self: PlacementResult, all: readonly PlacementResult[]): ExpectationResult {
  const other = all.find((p) => p.name === r.to);
  if (!other || other.error) {
    // Run with --placements that left the reference out: the rule cannot be judged, and is not held against the run.
    return result(kind, r, null, true, `skipped: ${r.to} was not measured in this run`);
  }
  const otherPeak = effectivePeak(other);
  if (otherPeak <= 0) return result(kind, r, null, false, `${r.to} has no peak memory to compare with`);
  const peak = effectivePeak(self);
  const ratio = peak / otherPeak;
  const shown = `${ratio.toFixed(2)}× ${r.to} (${mib(peak)} / ${mib(otherPeak)})`;
  if (kind === 'maxPeakRatio') {
    const ok = ratio <= r.value;
    return result(kind, r, +ratio.toFixed(4), ok, `peak ${shown} ${ok ? '<=' : '>'} ${r.value}×`);
  }
  if (self.oomKills > 0) return result(kind, r, +ratio.toFixed(4), true, `OOM-killed ${self.oomKills}×, so peak reached the limit (${shown})`);
  const ok = ratio >= r.value;
  return result(kind, r, +ratio.toFixed(4), ok, `peak ${shown} ${ok ? '>=' : '<'} ${r.value}× and not OOM-killed`);
}

/** Every rule of one placement's expect block. */
export function evaluateExpectations(self: PlacementResult, expect: ExpectInput | undefined, all: readonly PlacementResult[]): ExpectationResult[] {
  if (!expect) return [];
  const out: ExpectationResult[] = [];
  if (self.error) {
    out.push(result('run', 'carried out', 'failed', false, `the placement could not be run: ${self.error}`));
    return out;
  }
  if (expect.oomKilled !== undefined) {
    const killed = self.oomKills > 0;
    const ok = killed === expect.oomKilled;
    const msg = killed ? `OOM-killed ${self.oomKills} time(s)` : 'not OOM-killed';
    out.push(result('oomKilled', expect.oomKilled, killed, ok, `${msg}, expected ${expect.oomKilled ? 'at least one OOM kill' : 'none'}`));
  }
  if (expect.maxPeakMemory !== undefined) {
    const limit = parseBytes(expect.maxPeakMemory)!;
    const ok = self.peakMemoryBytes <= limit;
    out.push(result('maxPeakMemory', expect.maxPeakMemory, self.peakMemoryBytes, ok, `peak memory ${mib(self.peakMemoryBytes)} ${ok ? '<=' : '>'} ${mib(limit)}`));
  }
  if (expect.minPeakMemory !== undefined) {
    const min = parseBytes(expect.minPeakMemory)!;
    const peak = effectivePeak(self);
    const ok = peak >= min;
    out.push(result('minPeakMemory', expect.minPeakMemory, peak, ok, `peak memory ${mib(peak)} ${ok ? '>=' : '<'} ${mib(min)}`));
  }
  if (expect.minOkRps !== undefined) {
    const ok = self.okRps >= expect.minOkRps;
    out.push(result('minOkRps', expect.minOkRps, self.okRps, ok, `ok calls ${rps(self.okRps)} ${ok ? '>=' : '<'} ${rps(expect.minOkRps)}`));
  }
  if (expect.maxErrorRps !== undefined) {
    const errors = self.errorRps + self.deadlineExceededRps;
    const ok = errors <= expect.maxErrorRps;
    out.push(result('maxErrorRps', expect.maxErrorRps, errors, ok, `failed calls ${rps(errors)} ${ok ? '<=' : '>'} ${rps(expect.maxErrorRps)}`));
  }
  if (expect.maxRestarts !== undefined) {
    const ok = self.restarts <= expect.maxRestarts;
    out.push(result('maxRestarts', expect.maxRestarts, self.restarts, ok, `${self.restarts} restart(s) ${ok ? '<=' : '>'} ${expect.maxRestarts}`));
  }
  if (expect.maxPeakRatio) out.push(ratioCheck('maxPeakRatio', expect.maxPeakRatio, self, all));
  if (expect.minPeakRatio) out.push(ratioCheck('minPeakRatio', expect.minPeakRatio, self, all));
  return out;
}

/** Fills `expectations` and `passed` of every placement (ratios need all of them measured first). */
export function applyExpectations(placements: PlacementResult[], expect: Partial<Record<string, ExpectInput>>): boolean {
  for (const p of placements) {
    p.expectations = evaluateExpectations(p, expect[p.name], placements);
    p.passed = !p.error && p.expectations.every((e) => e.passed);
  }
  return placements.every((p) => p.passed);
}
