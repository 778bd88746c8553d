// The reference agent's limiter as configured: the variant's placement, and its key — the
// variant's own, else the scenario's default key for that placement.
import { isLimitedPlacement } from '../../contract/index.js';
import type { LimiterChoice } from '../kind.js';
import type { ReferenceAgent } from './schema.js';

export function referenceLimiter(a: Pick<ReferenceAgent, 'placement' | 'key' | 'keys'>): LimiterChoice {
  return { placement: a.placement, key: isLimitedPlacement(a.placement) ? (a.key ?? a.keys[a.placement]) : null };
}
