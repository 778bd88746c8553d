// Where a SPIRE agent's limiter sits follows from its rate limits and its build: on when any method
// has a limit above 0; as released it is post-attestation, keyed on the selector set; a build with
// the limiter moved before attestation keys on the pod UID. Both keys are their placement's default.
import { defaultKey, type LimitedPlacement } from '../../contract/index.js';
import { limiterEnabled, type SpireRateLimits } from '../../spire/index.js';
import type { LimiterChoice } from '../kind.js';

export function spireLimiter(rateLimits: Record<string, number | undefined> | undefined, build: LimitedPlacement = 'post-attestation'): LimiterChoice {
  if (!limiterEnabled(rateLimits as SpireRateLimits | undefined)) return { placement: 'disabled', key: null };
  return { placement: build, key: defaultKey(build) };
}

/** The limits SPIRE is given: 0 means "no limit" there, so such keys are left out. */
export function spireRateLimits(given: Record<string, number | undefined> | undefined): SpireRateLimits {
  return Object.fromEntries(Object.entries(given ?? {}).filter(([, v]) => typeof v === 'number' && v > 0)) as SpireRateLimits;
}
