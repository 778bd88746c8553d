// The agent's own signing material, generated in memory at start: a P-256 root CA for the trust
// domain that issues X.509-SVIDs, and the ES256 key set that signs JWT-SVIDs and is published as JWKS.
import 'reflect-metadata';
import { createHash, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { ConfigError } from '../errors.js';
import { parseSpiffeId, trustDomainId } from './spiffe-id.js';

type Crypto = typeof webcrypto;
type CryptoKey = webcrypto.CryptoKey;

const crypto: Crypto = webcrypto;
// @peculiar/x509 only finds a provider by itself in browsers; every call below also passes it explicitly.
x509.cryptoProvider.set(crypto as never);

const EC_KEY = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const EC_SIGN = { name: 'ECDSA', hash: 'SHA-256' } as const;
/** Certificates carry whole seconds; the CA starts a minute early so a leaf issued at once is inside it. */
const CA_BACKDATE_MS = 60_000;
const DEFAULT_CA_VALIDITY_MS = 365 * 24 * 3_600_000;

export interface IssuedX509Svid {
  spiffeId: string;
  /** DER chain, leaf first. The root is not repeated here: it is the bundle. */
  certChainDer: Buffer;
  /** PKCS#8 DER of the leaf's private key. */
  keyDer: Buffer;
  notBefore: Date;
  notAfter: Date;
}

export interface AgentCaOptions {
  trustDomain: string;
  /** Lifetime of the root; leaves never outlive it. Default one year. */
  validityMs?: number;
  now?: () => number;
}

const LEAF_SUBJECT = new x509.Name('O=attestorm');

/** RFC 5280 4.2.1.2 method 1: SHA-1 of the subjectPublicKey bits, which for EC is the raw point. */
async function keyIdentifier(publicKey: CryptoKey): Promise<string> {
  const raw = Buffer.from(await crypto.subtle.exportKey('raw', publicKey));
  return createHash('sha1').update(raw).digest('hex');
}

const wholeSeconds = (ms: number): Date => new Date(Math.floor(ms / 1000) * 1000);

function generateEcKeyPair(extractable: boolean): Promise<webcrypto.CryptoKeyPair> {
  return crypto.subtle.generateKey(EC_KEY, extractable, ['sign', 'verify']) as Promise<webcrypto.CryptoKeyPair>;
}

/** The trust domain's root CA: self-signed, URI SAN spiffe://<td>, and the only key that signs X.509-SVIDs. */
export class AgentCa {
  readonly trustDomain: string;
  /** DER of the root certificate: the X.509 bundle. */
  readonly certDer: Buffer;
  readonly notAfter: Date;
  readonly #keys: webcrypto.CryptoKeyPair;
  readonly #authorityKeyId: x509.AuthorityKeyIdentifierExtension;
  readonly #now: () => number;
  // Parsed once: turning a DN string into ASN.1 costs about as much as a signature.
  readonly #issuerName: x509.Name;

  private constructor(
    trustDomain: string,
    cert: x509.X509Certificate,
    keys: webcrypto.CryptoKeyPair,
    aki: x509.AuthorityKeyIdentifierExtension,
    now: () => number,
  ) {
    this.trustDomain = trustDomain;
    this.#keys = keys;
    this.#authorityKeyId = aki;
    this.#now = now;
    this.certDer = Buffer.from(cert.rawData);
    this.notAfter = cert.notAfter;
    this.#issuerName = cert.subjectName;
  }

  static async create(opts: AgentCaOptions): Promise<AgentCa> {
    const now = opts.now ?? Date.now;
    const tdId = trustDomainId(opts.trustDomain);
    const validityMs = opts.validityMs ?? DEFAULT_CA_VALIDITY_MS;
    if (!(validityMs > 0)) throw new ConfigError(`CA validity must be a positive number of milliseconds, got ${validityMs}`);
    // The root's private key never leaves this process, so it is created non-extractable.
    const keys = await generateEcKeyPair(false);
    const start = now();
    const cert = await x509.X509CertificateGenerator.createSelfSigned(
      {
        name: `O=attestorm, CN=${opts.trustDomain}`,
        notBefore: wholeSeconds(start - CA_BACKDATE_MS),
        notAfter: wholeSeconds(start + validityMs),
        keys: keys as never,
        signingAlgorithm: EC_SIGN,
        extensions: [
          new x509.BasicConstraintsExtension(true, undefined, true),
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
          new x509.SubjectAlternativeNameExtension([{ type: 'url', value: tdId }]),
          await x509.SubjectKeyIdentifierExtension.create(keys.publicKey as never, false, crypto as never),
        ],
      },
      crypto as never,
    );
    const aki = await x509.AuthorityKeyIdentifierExtension.create(keys.publicKey as never, false, crypto as never);
    return new AgentCa(opts.trustDomain, cert, keys, aki, now);
  }

  /**
   * A fresh P-256 key and a leaf certificate for `spiffeId`: the ID as the only URI SAN, not a CA,
   * digitalSignature only, valid for `ttlMs` (never past the root's own expiry).
   */
  async issueX509Svid(spiffeId: string, ttlMs: number): Promise<IssuedX509Svid> {
    const id = parseSpiffeId(spiffeId);
    if (id.trustDomain !== this.trustDomain) {
      throw new ConfigError(`SPIFFE ID must be in trust domain "${this.trustDomain}" to be signed by its CA, got ${JSON.stringify(spiffeId)}`);
    }
    if (id.path === '') {
      throw new ConfigError(`SPIFFE ID of an X.509-SVID must have a path (a workload, not the trust domain), got ${JSON.stringify(spiffeId)}`);
    }
    if (!(ttlMs >= 1000)) throw new ConfigError(`X.509-SVID TTL must be at least 1s, got ${ttlMs}ms`);

    const keys = await generateEcKeyPair(true);
    const start = this.#now();
    const notBefore = wholeSeconds(start);
    const notAfter = new Date(Math.min(notBefore.getTime() + ttlMs, this.notAfter.getTime()));
    const cert = await x509.X509CertificateGenerator.create(
      {
        subject: LEAF_SUBJECT,
        issuer: this.#issuerName,
        notBefore,
        notAfter,
        publicKey: keys.publicKey as never,
        signingKey: this.#keys.privateKey as never,
        signingAlgorithm: EC_SIGN,
        extensions: [
          new x509.BasicConstraintsExtension(false, undefined, true),
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
          // TLS both ways is what workloads do with SVIDs; SPIRE sets the same two.
          new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]),
          new x509.SubjectAlternativeNameExtension([{ type: 'url', value: id.id }]),
          new x509.SubjectKeyIdentifierExtension(await keyIdentifier(keys.publicKey)),
          this.#authorityKeyId,
        ],
      },
      crypto as never,
    );
    const pkcs8 = await crypto.subtle.exportKey('pkcs8', keys.privateKey);
    return {
      spiffeId: id.id,
      certChainDer: Buffer.from(cert.rawData),
      keyDer: Buffer.from(pkcs8),
      notBefore,
      notAfter,
    };
  }
}

export interface JwtSigningKey {
  /** RFC 7638 thumbprint of the public key: stable, and unique per key without coordination. */
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
  createdAt: number;
  retiredAt?: number;
}

export interface JwtKeySetOptions {
  /** How long a retired key stays published: the JWT-SVID TTL, so every token it signed stays verifiable. */
  retainMs: number;
  /** Upper bound on published keys, for very short rotation intervals. Default 16. */
  maxKeys?: number;
  now?: () => number;
}

/** The ES256 keys that sign JWT-SVIDs: one current key plus retired keys whose tokens may still be alive. */
export class JwtKeySet {
  #keys: JwtSigningKey[];
  #json: Buffer;
  readonly #retainMs: number;
  readonly #maxKeys: number;
  readonly #now: () => number;

  private constructor(first: JwtSigningKey, opts: JwtKeySetOptions) {
    this.#keys = [first];
    this.#retainMs = opts.retainMs;
    this.#maxKeys = opts.maxKeys ?? 16;
    this.#now = opts.now ?? Date.now;
    this.#json = this.#render();
  }

  static async create(opts: JwtKeySetOptions): Promise<JwtKeySet> {
    if (!(opts.maxKeys === undefined || (Number.isInteger(opts.maxKeys) && opts.maxKeys >= 2))) {
      throw new ConfigError(`JWT key set maxKeys must be an integer of at least 2 (current and previous), got ${opts.maxKeys}`);
    }
    return new JwtKeySet(await newSigningKey((opts.now ?? Date.now)()), opts);
  }

  /** The key new tokens are signed with. */
  get current(): JwtSigningKey {
    return this.#keys[0]!;
  }

  /** Every published key, current first. */
  get keys(): readonly JwtSigningKey[] {
    return this.#keys;
  }

  /** A new current key; the old one stays published for retainMs, then is dropped at a later rotation. */
  async rotate(): Promise<void> {
    const now = this.#now();
    const next = await newSigningKey(now);
    const kept = this.#keys.map((k) => (k.retiredAt === undefined ? { ...k, retiredAt: now } : k)).filter((k) => now - k.retiredAt! < this.#retainMs);
    this.#keys = [next, ...kept].slice(0, this.#maxKeys);
    this.#json = this.#render();
  }

  /** The JWKS object: public keys only. */
  jwks(): { keys: JWK[] } {
    return { keys: this.#keys.map((k) => ({ ...k.publicJwk })) };
  }

  /** The JWKS as JSON bytes (the value of the Workload API's bundle map); rebuilt only on rotation. */
  jwksJson(): Buffer {
    return this.#json;
  }

  #render(): Buffer {
    return Buffer.from(JSON.stringify(this.jwks()));
  }
}

async function newSigningKey(createdAt: number): Promise<JwtSigningKey> {
  // Non-extractable private key; the public half is exported as a JWK for the bundle.
  const pair = (await crypto.subtle.generateKey(EC_KEY, false, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const exported = (await crypto.subtle.exportKey('jwk', pair.publicKey)) as JWK;
  // No "use": jose (and other JWKS consumers) skip keys whose use is not "sig", and the
  // SPIFFE bundle's "jwt-svid" would be exactly that. No "alg" either, as SPIRE publishes none.
  const publicJwk: JWK = { kty: exported.kty!, crv: exported.crv!, x: exported.x!, y: exported.y! };
  const kid = await calculateJwkThumbprint(publicJwk, 'sha256');
  return { kid, privateKey: pair.privateKey, publicJwk: { ...publicJwk, kid }, createdAt };
}
