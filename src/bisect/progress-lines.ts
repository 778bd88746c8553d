// The bisect's lines on stderr: before a step, which commit and how many steps are left with the
// time they will take at the pace of the steps measured so far; after it, its mark and figures.
import { formatMiB } from '../util/index.js';
import type { BisectState, BisectStep } from './bisect-state.js';
import type { StepFigures } from './classify.js';

const minutes = (s: number) => (s < 90 ? `${Math.round(s)} s` : `${(s / 60).toFixed(s < 600 ? 1 : 0)} min`);

/** "4 steps left with this one, about 28 min at the 7.0 min a step has taken so far". */
export function timeLeft(state: Pick<BisectState, 'steps' | 'rangeCommits'>, stepsAfter: number | null): string {
  // git gives no count while a merge base is to be tested: a bisection of the whole range is the bound.
  const left = stepsAfter !== null ? stepsAfter + 1 : Math.max(1, Math.ceil(Math.log2(state.rangeCommits + 1)) - state.steps.length);
  const words = `${stepsAfter === null ? 'about ' : ''}${left} step${left === 1 ? '' : 's'} left with this one`;
  const done = state.steps.filter((s) => s.seconds > 0);
  if (!done.length) return `${words}; the time they take is known after the first`;
  const each = done.reduce((a, s) => a + s.seconds, 0) / done.length;
  return `${words}, about ${minutes(left * each)} at the ${minutes(each)} a step has taken so far`;
}

export function testLine(state: BisectState, n: number, commit: string, subject: string, stepsAfter: number | null): string {
  return `bisect step ${n}: ${commit.slice(0, 9)} ${subject} — ${timeLeft(state, stepsAfter)}`;
}

/** "peak 512.0 MiB (OOM-killed), 2 OOM kills, 210.3 ok/s, 0.22 kubelet requests/s". */
export function figuresText(f: StepFigures): string {
  const peak = f.peakMemoryBytes === null ? 'peak unmeasured' : `peak ${f.oomKills > 0 ? '≥ ' : ''}${formatMiB(f.peakMemoryBytes)}`;
  const kubelet = f.kubeletRequestsPerSecond === null ? '' : `, ${f.kubeletRequestsPerSecond.toFixed(2)} kubelet requests/s`;
  return `${peak}, ${f.oomKills} OOM kill${f.oomKills === 1 ? '' : 's'}, ${f.okRps.toFixed(1)} ok/s${kubelet}${f.repetitions > 1 ? ` (${f.repetitions} repetitions)` : ''}`;
}

export function stepLine(s: BisectStep): string {
  return `bisect step ${s.n}: ${s.commit.slice(0, 9)} is ${s.mark} — ${s.reason}${s.figures ? ` (${figuresText(s.figures)})` : ''}; ${minutes(s.seconds)}`;
}
