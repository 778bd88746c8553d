// A variant whose calls mostly failed while its agent stayed up is failed, naming the cause: the
// table of errors is what the run showed, not a weak storm. The rule: at least 90% of the storm's
// calls ended in an error (not a rejection, not a deadline), none was rejected, and the agent was
// neither OOM-killed nor restarted nor dead during the load (a dying agent's errors are its death's,
// judged by oomKilled), and the scenario applied no fault (a fault's errors are its own, judged by its
// recovery and the scenario's rules).
// The same for bystanders that never succeeded, their calls errors rather than deadlines. Applied
// to every variant, expectations or not.
import type { CallCausesRecord, ExpectationResult, VariantResult } from '../contract/index.js';
import { result } from './expectation-result.js';

/** Share of the storm's calls that must be errors for the variant to be failed. */
export const FAILED_CALLS_SHARE = 0.9;
/** Fewer calls than this judge nothing: a run too short to tell. */
const MIN_CALLS_PER_SECOND = 1;
const MIN_BYSTANDER_CALLS = 5;

const pct = (x: number) => `${Math.round(100 * x)}%`;

function codesText(byCode: Record<string, number>): string {
  const total = Object.values(byCode).reduce((a, b) => a + b, 0);
  if (!total) return '';
  return Object.entries(byCode)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([code, n]) => `${code} ${pct(n / total)}`)
    .join(', ');
}

/** "the agent's log: "k8s attestor: … ENETUNREACH" (412 lines)", or nothing without a failure line. */
function logText(c: CallCausesRecord | undefined): string {
  const top = c?.agentLog[0];
  return top ? `; the agent's log, most often: "${top.line}" (${top.count} line${top.count === 1 ? '' : 's'})` : '';
}

/** The storm's and the bystanders' rule, when it applies; none for a variant that did not run, died or was not judged. */
export function failedCallChecks(v: VariantResult): ExpectationResult[] {
  // Faults break calls on purpose (a frozen agent refuses connections), and an agent that died did not stay up.
  if (v.error || v.notJudged || v.oomKills > 0 || v.restarts > 0 || (v.deaths ?? []).some((d) => d.phase === 'load') || v.faults?.length) return [];
  const out: ExpectationResult[] = [];
  const total = v.okRps + v.rejectedRps + v.errorRps + v.deadlineExceededRps;
  if (total >= MIN_CALLS_PER_SECOND && v.rejectedRps === 0 && v.errorRps / total >= FAILED_CALLS_SHARE) {
    const share = v.errorRps / total;
    const codes = codesText(v.callCauses?.byCode ?? {});
    out.push(
      result(
        'stormCalls',
        `< ${pct(FAILED_CALLS_SHARE)} errors`,
        +share.toFixed(4),
        'failed',
        'measured',
        `${share === 1 ? 'every' : `${pct(share)} of the`} storm call${share === 1 ? '' : 's'} failed with an error while the agent stayed up (none rejected${codes ? `; at the client: ${codes}` : ''})${logText(v.callCauses)}`,
      ),
    );
  }
  const b = v.bystanders;
  // Errors, not deadlines: a collapsing agent's bystanders time out, and that is the storm's effect, judged by minBystanderSuccess.
  const deadlines = b?.byStatus['DEADLINE_EXCEEDED'] ?? 0;
  if (b && b.calls >= MIN_BYSTANDER_CALLS && b.ok === 0 && v.rejectedRps === 0 && deadlines / b.calls < 1 - FAILED_CALLS_SHARE) {
    const codes = codesText(b.byStatus);
    out.push(
      result(
        'bystanderCalls',
        'some served',
        0,
        'failed',
        'measured',
        `no bystander call succeeded (0 of ${b.calls}) while the agent stayed up${codes ? `; at the client: ${codes}` : ''}${logText(v.callCauses)}`,
      ),
    );
  }
  return out;
}
