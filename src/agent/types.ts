// The contracts between the agent's parts: caller credentials, attestors, limiter keys and the
// identity issuer. The server composes these; each part lives in its own file behind one of them.

/** One selector, e.g. { type: 'k8s', value: 'ns:default' } or { type: 'unix', value: 'uid:0' }. */
export interface Selector {
  type: string;
  value: string;
}

/** What the kernel told us about the peer at accept time (SO_PEERCRED) plus its start time. */
export interface CallerCreds {
  pid: number;
  uid: number;
  gid: number;
  /** Field 22 of /proc/<pid>/stat at accept time; null when the process was already gone. */
  startTime: string | null;
}

export interface Attestor {
  /** Registry name: 'unix', 'k8s'. */
  readonly name: string;
  /** Selectors for the caller. Throws on failure (the server answers Unavailable). */
  attest(caller: CallerCreds): Promise<Selector[]>;
  /** Release timers and sockets. */
  close?(): void;
}

/** What a limiter key strategy may look at. selectors/spiffeIds exist only after attestation. */
export interface KeyContext {
  caller: CallerCreds;
  selectors?: readonly Selector[];
  spiffeIds?: readonly string[];
}

export interface LimiterKey {
  key: string;
  /** Metric label: 'pod_uid', 'os_uid', 'selector_set', 'spiffe_id'. */
  keyType: string;
}

export interface KeyStrategy {
  /** Registry name: one of KEY_STRATEGIES (src/contract/limiter-vocabulary.ts). */
  readonly name: string;
  /** True when the key is made from attestation results: the pipeline then hands it selectors and SPIFFE IDs. */
  readonly needsSelectors: boolean;
  key(ctx: KeyContext): LimiterKey;
}

/** The SPIRE config keys of the per-method limits, plus ValidateJWTSVID (exempt unless set). */
export type LimitMethodKey = 'fetch_x509_svid' | 'fetch_jwt_svid' | 'fetch_x509_bundles' | 'fetch_jwt_bundles' | 'validate_jwt_svid';

export interface RateLimiter {
  /** Non-blocking: take one token from the bucket of (method, key); false when empty. Methods with limit 0 always allow. */
  allow(method: LimitMethodKey, key: string): boolean;
  /** Number of live keys across both generations (for metrics and benchmarks). */
  size(): number;
}

/** A registration entry: all its selectors must be among the caller's. */
export interface RegistrationEntry {
  spiffeId: string;
  selectors: Selector[];
  hint?: string;
}

export interface JwtSvid {
  spiffeId: string;
  token: string;
  hint: string;
  expiresAt: number;
}

export interface X509Svid {
  spiffeId: string;
  /** DER chain, leaf first. */
  certChainDer: Buffer;
  /** PKCS#8 DER. */
  keyDer: Buffer;
  hint: string;
}

export interface IdentityIssuer {
  readonly trustDomain: string;
  /** SPIFFE IDs the caller's selectors entitle it to (entries file, or derived when there is none). */
  match(selectors: readonly Selector[]): RegistrationEntry[];
  /** Cached per (SPIFFE ID, audience set) until near expiry. */
  jwtSvid(entry: RegistrationEntry, audience: readonly string[]): Promise<JwtSvid>;
  x509Svid(entry: RegistrationEntry): Promise<X509Svid>;
  /** DER of the CA certificates of the trust domain. */
  x509BundleDer(): Buffer;
  /** JWKS JSON of the trust domain's JWT signing keys. */
  jwtBundleJson(): Buffer;
  /** Verifies signature, audience and expiry; throws an Error whose message is the reason. */
  validateJwt(token: string, audience: string): Promise<{ spiffeId: string; claims: Record<string, unknown> }>;
  /** Called after each rotation (bundle or SVIDs changed) so streams can push an update. */
  onRotate(listener: () => void): () => void;
  close(): void;
}
