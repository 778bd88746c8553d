// JWT-SVIDs: minting with a bounded per-(SPIFFE ID, audience) cache, and validation against the
// trust domain's JWKS with a plain-language reason for every rejection (ValidateJWTSVID returns it).
import { SignJWT, createLocalJWKSet, decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { ConfigError } from '../errors.js';
import { LruMap } from '../util/index.js';
import type { JwtKeySet } from './ca.js';
import { spiffeIdProblem } from './spiffe-id.js';

export interface MintedJwtSvid {
  spiffeId: string;
  token: string;
  /** Milliseconds since the epoch (the iat claim × 1000). */
  issuedAt: number;
  /** Milliseconds since the epoch (the exp claim × 1000). */
  expiresAt: number;
}

export interface JwtSvidMinterOptions {
  keys: JwtKeySet;
  /** Token lifetime in ms; JWT times are whole seconds, so it is rounded to at least 1 s. */
  ttlMs: number;
  /** Most (SPIFFE ID, audience) pairs remembered; the least recently used is forgotten. Default 4096. */
  maxCached?: number;
  now?: () => number;
}

interface Slot {
  pending: Promise<MintedJwtSvid>;
  done?: MintedJwtSvid;
}

/** The cache key: order and repetition of audiences do not change who may accept the token. */
export function jwtSvidCacheKey(spiffeId: string, audience: readonly string[]): string {
  return JSON.stringify([spiffeId, ...[...new Set(audience)].sort()]);
}

/**
 * Signs JWT-SVIDs (ES256, kid, typ JWT; sub, aud, exp, iat) and caches them per (SPIFFE ID, audience
 * set) until less than half their lifetime remains. Concurrent requests for the same pair share one
 * signature, and the cache is an LRU so a storm of distinct audiences cannot grow it without bound.
 */
export class JwtSvidMinter {
  readonly #keys: JwtKeySet;
  readonly #ttlSeconds: number;
  readonly #now: () => number;
  readonly #cache: LruMap<string, Slot>;

  constructor(opts: JwtSvidMinterOptions) {
    if (!(opts.ttlMs > 0)) throw new ConfigError(`svid.jwtTtl must be a positive duration, got ${opts.ttlMs}ms`);
    this.#keys = opts.keys;
    this.#ttlSeconds = Math.max(1, Math.round(opts.ttlMs / 1000));
    this.#now = opts.now ?? Date.now;
    this.#cache = new LruMap(opts.maxCached ?? 4096);
  }

  /** Number of cached (SPIFFE ID, audience) pairs. */
  get size(): number {
    return this.#cache.size;
  }

  /** Forget every cached token (after a key rotation, so new tokens carry the new kid). */
  clear(): void {
    this.#cache.clear();
  }

  mint(spiffeId: string, audience: readonly string[]): Promise<MintedJwtSvid> {
    if (audience.length === 0) return Promise.reject(new ConfigError('audience must be specified (at least one value)'));
    const key = jwtSvidCacheKey(spiffeId, audience);
    const hit = this.#cache.get(key);
    if (hit && (hit.done === undefined || this.#fresh(hit.done))) return hit.pending;

    const slot: Slot = { pending: this.#sign(spiffeId, audience) };
    slot.pending.then(
      (svid) => {
        slot.done = svid;
      },
      () => {
        // A failed signature is not remembered: the next caller tries again.
        if (this.#cache.get(key) === slot) this.#cache.delete(key);
      },
    );
    this.#cache.set(key, slot);
    return slot.pending;
  }

  #fresh(svid: MintedJwtSvid): boolean {
    return svid.expiresAt - this.#now() > (svid.expiresAt - svid.issuedAt) / 2;
  }

  async #sign(spiffeId: string, audience: readonly string[]): Promise<MintedJwtSvid> {
    const signer = this.#keys.current;
    const iat = Math.floor(this.#now() / 1000);
    const exp = iat + this.#ttlSeconds;
    const token = await new SignJWT({ aud: [...audience] })
      .setProtectedHeader({ alg: 'ES256', kid: signer.kid, typ: 'JWT' })
      .setSubject(spiffeId)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(signer.privateKey);
    return { spiffeId, token, issuedAt: iat * 1000, expiresAt: exp * 1000 };
  }
}

// The algorithms the JWT-SVID spec allows; "none" and HMAC are never accepted.
const ALGORITHMS = ['ES256', 'ES384', 'ES512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'];

export interface JwtSvidValidatorOptions {
  trustDomain: string;
  /** The keys to trust; read on every validation so rotations are picked up. */
  keys: JwtKeySet;
  now?: () => number;
}

export interface ValidatedJwtSvid {
  spiffeId: string;
  claims: Record<string, unknown>;
}

function reasonFor(err: unknown, kid: string, alg: unknown): string {
  if (!(err instanceof joseErrors.JOSEError)) return `token is invalid (${(err as Error)?.message ?? String(err)})`;
  switch (err.code) {
    case 'ERR_JWT_EXPIRED':
      return 'token has expired';
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED': {
      const { claim, reason } = err as joseErrors.JWTClaimValidationFailed;
      if (reason === 'missing') return `token has no ${claim} claim`;
      if (claim === 'nbf' || (claim === 'iat' && reason === 'check_failed')) return `token is not valid yet (${claim} is in the future)`;
      return `token ${claim} claim is invalid (${err.message})`;
    }
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return `token signature does not verify with key "${kid}" of the trust domain's JWT bundle`;
    case 'ERR_JWKS_NO_MATCHING_KEY':
      return `token key ID "${kid}" is not in the trust domain's JWT bundle`;
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return `token algorithm ${JSON.stringify(alg)} is not allowed for JWT-SVIDs (allowed: ${ALGORITHMS.join(', ')})`;
    case 'ERR_JWS_INVALID':
    case 'ERR_JWT_INVALID':
      return `token is malformed (${err.message})`;
    default:
      return `token is invalid (${err.message})`;
  }
}

/**
 * Checks a JWT-SVID: signature by a key of the trust domain's bundle, expiry, audience and subject.
 * Throws a ConfigError whose message is the reason ("token has expired").
 */
export class JwtSvidValidator {
  readonly #trustDomain: string;
  readonly #keys: JwtKeySet;
  readonly #now: () => number;
  #jwksFor: Buffer | null = null;
  #getKey: JWTVerifyGetKey | null = null;

  constructor(opts: JwtSvidValidatorOptions) {
    this.#trustDomain = opts.trustDomain;
    this.#keys = opts.keys;
    this.#now = opts.now ?? Date.now;
  }

  // jose caches imported keys inside a key set; rebuild it only when the published keys change.
  #keyResolver(): JWTVerifyGetKey {
    const json = this.#keys.jwksJson();
    if (this.#getKey === null || this.#jwksFor !== json) {
      this.#getKey = createLocalJWKSet(this.#keys.jwks());
      this.#jwksFor = json;
    }
    return this.#getKey;
  }

  async validate(token: string, audience: string): Promise<ValidatedJwtSvid> {
    if (token.length === 0) throw new ConfigError('token is empty');
    if (audience.length === 0) throw new ConfigError('audience must be specified');
    let kid: string;
    let alg: unknown;
    try {
      const header = decodeProtectedHeader(token);
      if (typeof header.kid !== 'string' || header.kid.length === 0) throw new ConfigError('token header has no kid');
      if (header.typ !== undefined && header.typ !== 'JWT' && header.typ !== 'JOSE') {
        throw new ConfigError(`token header typ must be JWT or JOSE, got ${JSON.stringify(header.typ)}`);
      }
      kid = header.kid;
      alg = header.alg;
    } catch (err) {
      if (err instanceof ConfigError) throw err;
      throw new ConfigError(`token is malformed (${(err as Error).message})`);
    }

    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.#keyResolver(), {
        algorithms: ALGORITHMS,
        currentDate: new Date(this.#now()),
        requiredClaims: ['sub', 'aud', 'exp'],
      }));
    } catch (err) {
      throw new ConfigError(reasonFor(err, kid, alg), { cause: err });
    }

    const aud = typeof payload.aud === 'string' ? [payload.aud] : (payload.aud ?? []);
    if (!aud.includes(audience)) {
      throw new ConfigError(`token audience ${JSON.stringify(aud)} does not include ${JSON.stringify(audience)}`);
    }
    const sub = payload.sub!;
    const problem = spiffeIdProblem(sub);
    if (problem !== null) throw new ConfigError(`token subject is not a SPIFFE ID: ${problem}`);
    if (!sub.startsWith(`spiffe://${this.#trustDomain}/`) && sub !== `spiffe://${this.#trustDomain}`) {
      throw new ConfigError(`token subject ${JSON.stringify(sub)} is not in trust domain "${this.#trustDomain}"`);
    }
    return { spiffeId: sub, claims: { ...payload } };
  }
}
