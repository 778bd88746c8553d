// Limiter key "spiffe-id": the SPIFFE IDs the caller is entitled to, so the bucket follows the
// issued identity rather than the attributes that produced it.
import { keyNeedsAttestation } from '../contract/index.js';
import type { KeyContext, KeyStrategy, LimiterKey } from './types.js';

/** Key of a caller no registration entry matched (every such caller shares it). */
export const NO_IDENTITY_KEY = '<no-identity>';

export function createSpiffeIdKeyStrategy(): KeyStrategy {
  return {
    name: 'spiffe-id',
    needsSelectors: keyNeedsAttestation('spiffe-id'),
    key(ctx: KeyContext): LimiterKey {
      const ids = ctx.spiffeIds;
      if (!ids || ids.length === 0) return { key: NO_IDENTITY_KEY, keyType: 'spiffe_id' };
      if (ids.length === 1) return { key: ids[0]!, keyType: 'spiffe_id' };
      // SPIFFE IDs cannot contain ',' unescaped in a path segment, so the join is unambiguous.
      return { key: [...new Set(ids)].sort().join(','), keyType: 'spiffe_id' };
    },
  };
}
