// Limiter key "selector-set" (SPIRE's merged design): SHA-256 over the caller's attested selectors,
// so callers with the same identity-relevant attributes share a bucket on any platform.
import { createHash } from 'node:crypto';
import { keyNeedsAttestation } from '../contract/index.js';
import type { KeyContext, KeyStrategy, LimiterKey, Selector } from './types.js';

/** Key of a caller attestation gave no selectors to (every such caller shares it). */
export const UNATTESTED_KEY = '<unattested>';

function compareSelectors(a: Selector, b: Selector): number {
  if (a.type !== b.type) return a.type < b.type ? -1 : 1;
  if (a.value !== b.value) return a.value < b.value ? -1 : 1;
  return 0;
}

/** Hex SHA-256 of the sorted (type, value) pairs; order and duplicates of the input do not matter. */
export function selectorSetHash(selectors: readonly Selector[]): string {
  const sorted = [...selectors].sort(compareSelectors);
  const h = createHash('sha256');
  let prev: Selector | undefined;
  for (const s of sorted) {
    if (prev && compareSelectors(prev, s) === 0) continue;
    // NUL separators: neither part can contain one, so ("a:b","c") and ("a","b:c") differ.
    h.update(s.type);
    h.update('\0');
    h.update(s.value);
    h.update('\0');
    prev = s;
  }
  return h.digest('hex');
}

export function createSelectorSetKeyStrategy(): KeyStrategy {
  return {
    name: 'selector-set',
    needsSelectors: keyNeedsAttestation('selector-set'),
    key(ctx: KeyContext): LimiterKey {
      const selectors = ctx.selectors;
      if (!selectors || selectors.length === 0) return { key: UNATTESTED_KEY, keyType: 'selector_set' };
      return { key: selectorSetHash(selectors), keyType: 'selector_set' };
    },
  };
}
