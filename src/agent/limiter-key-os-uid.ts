// Limiter key "os-uid": the caller's OS user ID from SO_PEERCRED. Free to compute and valid before
// attestation, but every pod running as the same UID shares one bucket.
import type { KeyContext, KeyStrategy, LimiterKey } from './types.js';

export function osUidKey(ctx: KeyContext): LimiterKey {
  return { key: `uid:${ctx.caller.uid}`, keyType: 'os_uid' };
}

export function createOsUidKeyStrategy(): KeyStrategy {
  return { name: 'os-uid', needsSelectors: false, key: osUidKey };
}
