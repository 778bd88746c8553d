// Limiter key "os-uid": the caller's OS user ID from SO_PEERCRED. Free to compute and valid before
// attestation, but every pod running as the same UID shares one bucket.
import { keyNeedsAttestation } from '../contract/index.js';
import type { KeyContext, KeyStrategy, LimiterKey } from './types.js';

// Keys made once per UID: a node has few, and the limiter's Map lookup is cheapest on a string it
// has seen before (its hash is already computed).
const keys = new Map<number, LimiterKey>();

export function osUidKey(ctx: KeyContext): LimiterKey {
  const uid = ctx.caller.uid;
  let k = keys.get(uid);
  if (!k) {
    if (keys.size >= 65_536) keys.clear();
    keys.set(uid, (k = { key: `uid:${uid}`, keyType: 'os_uid' }));
  }
  return k;
}

export function createOsUidKeyStrategy(): KeyStrategy {
  return { name: 'os-uid', needsSelectors: keyNeedsAttestation('os-uid'), key: osUidKey };
}
