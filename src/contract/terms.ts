// The vocabulary every record of the run folder uses: a call's outcome, a verdict, a variant run's phase.

export type Outcome = 'ok' | 'rateLimited' | 'deadlineExceeded' | 'error';
/** passed / failed, or inconclusive when only a bound (not a measurement) was available and it cannot decide the rule. */
export type Verdict = 'passed' | 'failed' | 'inconclusive';
/** Phases of one variant run, in order. */
export type Phase = 'starting-pods' | 'warmup' | 'load' | 'drain' | 'stop';
