// The agent's IdentityIssuer: entries (file or derived), the CA and JWT keys, SVID caches, and
// rotation on a timer. The server calls this after attestation; it never sees keys or caches.
import { ConfigError } from '../errors.js';
import { LruMap } from '../util/index.js';
import { AgentCa, JwtKeySet, type IssuedX509Svid } from './ca.js';
import type { AgentConfig } from './config.js';
import { deriveEntries, matchEntries, readEntriesFile } from './entries.js';
import { parseSpiffeId } from './spiffe-id.js';
import { JwtSvidMinter, JwtSvidValidator } from './svid-jwt.js';
import type { IdentityIssuer, JwtSvid, RegistrationEntry, Selector, X509Svid } from './types.js';

export interface IdentityIssuerOptions {
  /** Clock in ms since the epoch, for tests of expiry and cache freshness. Default Date.now. */
  now?: () => number;
  /** Most cached JWT-SVIDs (per SPIFFE ID and audience set). Default 4096. */
  jwtCacheSize?: number;
  /** Most cached X.509-SVIDs (per SPIFFE ID). Default 4096. */
  x509CacheSize?: number;
}

/** The IdentityIssuer plus what tests and the server's diagnostics may use. */
export interface AgentIdentityIssuer extends IdentityIssuer {
  /** Rotate now: new JWT signing key (the old one stays in the bundle), caches dropped, listeners called. */
  rotate(): Promise<void>;
  /** Milliseconds between timed rotations. */
  readonly rotationIntervalMs: number;
  /** Number of rotations so far. */
  readonly generation: number;
  readonly ca: AgentCa;
}

// setInterval's delay is a signed 32-bit number of ms; longer delays fire at once.
const MAX_TIMER_MS = 2 ** 31 - 1;

interface X509Slot {
  pending: Promise<IssuedX509Svid>;
  done?: IssuedX509Svid;
}

export async function createIdentityIssuer(cfg: AgentConfig, opts: IdentityIssuerOptions = {}): Promise<AgentIdentityIssuer> {
  const now = opts.now ?? Date.now;
  const trustDomain = cfg.trustDomain;
  const { jwtTtl, x509Ttl } = cfg.svid;
  if (!(x509Ttl >= 1000)) throw new ConfigError(`svid.x509Ttl must be at least 1s, got ${x509Ttl}ms`);
  if (!(jwtTtl >= 1000)) throw new ConfigError(`svid.jwtTtl must be at least 1s, got ${jwtTtl}ms`);
  const rotationIntervalMs = Math.min(MAX_TIMER_MS, Math.max(1, cfg.svid.rotationInterval || Math.floor(x509Ttl / 2)));

  // Read before any key is made, so a bad entries file fails fast and cheaply.
  const entries: RegistrationEntry[] | null = cfg.entries === undefined ? null : await readEntriesFile(cfg.entries, trustDomain);

  const { ca, jwtKeys } = await createKeyMaterial(trustDomain, jwtTtl, x509Ttl, now);
  const checkEntry = entryIdChecker(trustDomain);
  const jwt = jwtSvidSigning({ trustDomain, jwtKeys, ttlMs: jwtTtl, maxCached: opts.jwtCacheSize ?? 4096, now, checkEntry });
  const x509 = x509SvidIssuing({ ca, ttlMs: x509Ttl, maxCached: opts.x509CacheSize ?? 4096, now, checkEntry });
  const rotation = timedRotation(jwtKeys, [jwt, x509], rotationIntervalMs);

  return {
    trustDomain,
    ca,
    rotationIntervalMs,
    get generation() {
      return rotation.generation();
    },

    match(selectors: readonly Selector[]): RegistrationEntry[] {
      return entries === null ? deriveEntries(trustDomain, selectors) : matchEntries(entries, selectors);
    },

    jwtSvid: jwt.jwtSvid,
    x509Svid: x509.x509Svid,
    x509BundleDer: x509.x509BundleDer,
    jwtBundleJson: jwt.jwtBundleJson,
    validateJwt: jwt.validateJwt,
    onRotate: rotation.onRotate,
    rotate: rotation.rotate,
    close: rotation.close,
  };
}

/** The agent's key material: the CA that signs X.509-SVIDs, and the JWT signing keys (an old key stays in the bundle for a JWT TTL). */
async function createKeyMaterial(trustDomain: string, jwtTtl: number, x509Ttl: number, now: () => number): Promise<{ ca: AgentCa; jwtKeys: JwtKeySet }> {
  const ca = await AgentCa.create({ trustDomain, validityMs: Math.max(365 * 24 * 3_600_000, 4 * x509Ttl), now });
  const jwtKeys = await JwtKeySet.create({ retainMs: jwtTtl, now });
  return { ca, jwtKeys };
}

/** The issuer's JWT part: SVIDs signed with the current key (cached per SPIFFE ID and audience set), the JWKS, validation. */
function jwtSvidSigning(k: {
  trustDomain: string;
  jwtKeys: JwtKeySet;
  ttlMs: number;
  maxCached: number;
  now: () => number;
  checkEntry: (entry: RegistrationEntry, what: string) => string;
}): Pick<IdentityIssuer, 'jwtSvid' | 'jwtBundleJson' | 'validateJwt'> & { clear(): void } {
  const minter = new JwtSvidMinter({ keys: k.jwtKeys, ttlMs: k.ttlMs, maxCached: k.maxCached, now: k.now });
  const validator = new JwtSvidValidator({ trustDomain: k.trustDomain, keys: k.jwtKeys, now: k.now });
  return {
    async jwtSvid(entry: RegistrationEntry, audience: readonly string[]): Promise<JwtSvid> {
      const spiffeId = k.checkEntry(entry, 'spiffe_id');
      const minted = await minter.mint(spiffeId, audience);
      return { spiffeId, token: minted.token, hint: entry.hint ?? '', expiresAt: minted.expiresAt };
    },

    jwtBundleJson(): Buffer {
      return k.jwtKeys.jwksJson();
    },

    validateJwt(token: string, audience: string) {
      return validator.validate(token, audience);
    },

    clear: () => minter.clear(),
  };
}

/** The issuer's X.509 part: SVIDs issued by the CA (cached per SPIFFE ID), and the CA bundle. */
function x509SvidIssuing(k: {
  ca: AgentCa;
  ttlMs: number;
  maxCached: number;
  now: () => number;
  checkEntry: (entry: RegistrationEntry, what: string) => string;
}): Pick<IdentityIssuer, 'x509Svid' | 'x509BundleDer'> & { clear(): void } {
  const cache = x509SvidCache(k.ca, k.ttlMs, k.maxCached, k.now);
  return {
    async x509Svid(entry: RegistrationEntry): Promise<X509Svid> {
      const spiffeId = k.checkEntry(entry, 'entry spiffeId');
      const svid = await cache.get(spiffeId);
      return { spiffeId, certChainDer: svid.certChainDer, keyDer: svid.keyDer, hint: entry.hint ?? '' };
    },

    x509BundleDer(): Buffer {
      return k.ca.certDer;
    },

    clear: () => cache.clear(),
  };
}

/**
 * Rotation on a timer and on demand: a new JWT signing key, the SVID caches dropped (SVIDs are
 * re-issued lazily, on their next request), then the listeners called.
 */
function timedRotation(
  jwtKeys: JwtKeySet,
  caches: readonly { clear(): void }[],
  intervalMs: number,
): { rotate(): Promise<void>; generation(): number; onRotate(listener: () => void): () => void; close(): void } {
  const listeners = new Set<() => void>();
  let generation = 0;
  let rotating: Promise<void> | null = null;
  let closed = false;

  async function doRotate(): Promise<void> {
    await jwtKeys.rotate();
    // Lazily re-issued: the next request for an ID gets a new SVID; nothing is signed here.
    for (const cache of caches) cache.clear();
    generation += 1;
    for (const listener of [...listeners]) {
      try {
        listener();
      } catch (err) {
        process.emitWarning(`identity rotation listener threw: ${(err as Error)?.message ?? String(err)}`);
      }
    }
  }

  function rotate(): Promise<void> {
    // Overlapping rotations (a slow key generation under a short interval) collapse into one.
    rotating ??= doRotate().finally(() => {
      rotating = null;
    });
    return rotating;
  }

  const timer = setInterval(() => {
    rotate().catch((err: unknown) => process.emitWarning(`identity rotation failed: ${(err as Error)?.message ?? String(err)}`));
  }, intervalMs);
  // Rotation alone must never keep the process alive.
  timer.unref();

  return {
    rotate,
    generation: () => generation,
    onRotate(listener: () => void): () => void {
      if (closed) return () => {};
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    close(): void {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      listeners.clear();
    },
  };
}

/**
 * Checks an entry's SPIFFE ID (valid, in the trust domain) and returns it normalized. IDs already
 * checked are remembered, so a caller's repeated calls do not re-parse its ID; bounded, and cleared
 * when full (entries are few; derived IDs are one per caller identity).
 */
function entryIdChecker(trustDomain: string): (entry: RegistrationEntry, what: string) => string {
  const checked = new Map<string, string>();
  return (entry, what) => {
    const known = checked.get(entry.spiffeId);
    if (known !== undefined) return known;
    if (checked.size >= 4096) checked.clear();
    const id = parseSpiffeId(entry.spiffeId, what);
    if (id.trustDomain !== trustDomain) {
      throw new ConfigError(`${what} must be in trust domain "${trustDomain}", got ${JSON.stringify(entry.spiffeId)}`);
    }
    checked.set(entry.spiffeId, id.id);
    return id.id;
  };
}

/** X.509-SVIDs per SPIFFE ID, issued once however many callers ask at the same time. */
function x509SvidCache(ca: AgentCa, ttlMs: number, size: number, now: () => number): { get(spiffeId: string): Promise<IssuedX509Svid>; clear(): void } {
  const cache = new LruMap<string, X509Slot>(size);
  // A timed rotation normally replaces cached SVIDs first; this only matters when the rotation
  // interval is configured longer than the X.509 TTL, so a cached SVID is never served expired.
  const fresh = (svid: IssuedX509Svid): boolean => svid.notAfter.getTime() - now() > (svid.notAfter.getTime() - svid.notBefore.getTime()) / 2;
  return {
    get(spiffeId) {
      let slot = cache.get(spiffeId);
      if (!slot || (slot.done !== undefined && !fresh(slot.done))) {
        const next: X509Slot = { pending: ca.issueX509Svid(spiffeId, ttlMs) };
        next.pending.then(
          (svid) => {
            next.done = svid;
          },
          () => {
            if (cache.get(spiffeId) === next) cache.delete(spiffeId);
          },
        );
        cache.set(spiffeId, next);
        slot = next;
      }
      return slot.pending;
    },
    clear: () => cache.clear(),
  };
}
