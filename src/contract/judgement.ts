// What a run's verdict judged: every rule of the scenario's expect block counted by outcome, and
// each rule it could not judge named with why. A verdict over no judged rule is "compared", never
// passed: figures side by side say nothing about the expectations nobody checked.
import type { JudgementRecord } from './results.js';
import type { VariantResult } from './variant-result.js';

/** A rule whose precondition failed, or whose variant was not judged, says so first (preconditions.ts, expectations.ts). */
const NOT_JUDGED = /^not judged(?: \((.*?)\))?:\s*/;

function droppedReason(message: string): string | null {
  const m = NOT_JUDGED.exec(message);
  if (!m) return null;
  // "not judged (storm too weak …): <measured text>" keeps the why; "not judged: <why>" is all why.
  return m[1] ?? message.slice(m[0].length);
}

/** The rules of the variants that ran, plus those dropped before the run (variants not run). */
export function judgementOf(variants: readonly VariantResult[], droppedBeforeRun: readonly string[]): JudgementRecord {
  const j: JudgementRecord = { judged: 0, passed: 0, failed: 0, undecided: 0, dropped: [...droppedBeforeRun] };
  for (const v of variants) {
    for (const e of v.expectations) {
      const why = e.verdict === 'inconclusive' ? droppedReason(e.message) : null;
      if (why !== null) j.dropped.push(`${v.name}.${e.name} (${why})`);
      else if (e.verdict === 'inconclusive') j.undecided++;
      else {
        j.judged++;
        j[e.verdict]++;
      }
    }
  }
  return j;
}

/** "Judged 3 rules (2 passed, 1 failed); 1 undecided (…); 2 not judged: a: oomKilled, minOkRps (variant not run)." */
export function judgementSentence(j: JudgementRecord): string {
  const counts = j.judged === 0 ? 'No expectation was judged' : `Judged ${j.judged} rule${j.judged === 1 ? '' : 's'} (${j.passed} passed, ${j.failed} failed)`;
  const undecided = j.undecided ? `; ${j.undecided} undecided (only a bound, or nothing, measured)` : '';
  const dropped = j.dropped.length ? `; ${j.dropped.length} not judged: ${grouped(j.dropped).join('; ')}` : '';
  return `${counts}${undecided}${dropped}.`;
}

/** "pre.oomKilled (variant not run)", "pre.minOkRps (variant not run)" → "pre: oomKilled, minOkRps (variant not run)". */
function grouped(dropped: readonly string[]): string[] {
  const groups = new Map<string, { variant: string; why: string; rules: string[] }>();
  for (const d of dropped) {
    const m = /^([^.\s]+)\.(\S+) \((.*)\)$/.exec(d);
    if (!m) {
      groups.set(d, { variant: '', why: '', rules: [d] });
      continue;
    }
    const key = `${m[1]}\n${m[3]}`;
    const g = groups.get(key) ?? { variant: m[1]!, why: m[3]!, rules: [] };
    g.rules.push(m[2]!);
    groups.set(key, g);
  }
  return [...groups.values()].map((g) => (g.variant ? `${g.variant}: ${g.rules.join(', ')} (${g.why})` : g.rules[0]!));
}
