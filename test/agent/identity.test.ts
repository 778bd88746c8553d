import 'reflect-metadata';
import { X509Certificate, createPrivateKey, sign, verify } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as px509 from '@peculiar/x509';
import { SignJWT, createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { JwtKeySet } from '../../src/agent/ca.js';
import { parseAgentConfig, type AgentConfigInput } from '../../src/agent/config.js';
import { createIdentityIssuer, type AgentIdentityIssuer, type IdentityIssuerOptions } from '../../src/agent/identity.js';
import type { RegistrationEntry } from '../../src/agent/types.js';
import { ConfigError } from '../../src/errors.js';

const WEB: RegistrationEntry = { spiffeId: 'spiffe://example.org/ns/default/sa/web', selectors: [{ type: 'k8s', value: 'ns:default' }], hint: 'web' };
const DB: RegistrationEntry = { spiffeId: 'spiffe://example.org/ns/default/sa/db', selectors: [{ type: 'k8s', value: 'sa:db' }] };

const open: AgentIdentityIssuer[] = [];
afterEach(() => {
  for (const issuer of open.splice(0)) issuer.close();
});

async function issuer(cfg: AgentConfigInput = {}, opts: IdentityIssuerOptions = {}): Promise<AgentIdentityIssuer> {
  const created = await createIdentityIssuer(parseAgentConfig(cfg), opts);
  open.push(created);
  return created;
}

/** A clock the test moves by hand; starts at the real time so certificates look ordinary. */
function manualClock() {
  let t = Date.now();
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

async function reason(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a rejection, got none');
}

describe('JWT-SVIDs', () => {
  it('are ES256 tokens with kid and typ that verify with jose against the published JWKS', async () => {
    const id = await issuer();
    const svid = await id.jwtSvid(WEB, ['api', 'db']);
    expect(svid.spiffeId).toBe(WEB.spiffeId);
    expect(svid.hint).toBe('web');

    const jwks = JSON.parse(id.jwtBundleJson().toString('utf8')) as JSONWebKeySet;
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).not.toHaveProperty('d'); // public keys only
    const { payload, protectedHeader } = await jwtVerify(svid.token, createLocalJWKSet(jwks), { audience: 'api' });
    expect(protectedHeader).toEqual({ alg: 'ES256', kid: jwks.keys[0]!.kid, typ: 'JWT' });
    expect(payload.sub).toBe(WEB.spiffeId);
    expect(payload.aud).toEqual(['api', 'db']);
    expect(payload.exp! - payload.iat!).toBe(300); // default TTL: 5 minutes
    expect(svid.expiresAt).toBe(payload.exp! * 1000);
  });

  it('use the configured TTL', async () => {
    const id = await issuer({ svid: { jwtTtl: '90s' } });
    const claims = decodeJwt((await id.jwtSvid(WEB, ['a'])).token);
    expect(claims.exp! - claims.iat!).toBe(90);
  });

  it('are cached per SPIFFE ID and audience set, and re-minted past half their lifetime', async () => {
    const clock = manualClock();
    const id = await issuer({}, { now: clock.now });
    const first = await id.jwtSvid(WEB, ['a', 'b']);
    expect((await id.jwtSvid(WEB, ['a', 'b'])).token).toBe(first.token);
    expect((await id.jwtSvid(WEB, ['b', 'a', 'a'])).token).toBe(first.token); // same set
    expect((await id.jwtSvid(WEB, ['a'])).token).not.toBe(first.token);
    expect((await id.jwtSvid(DB, ['a', 'b'])).token).not.toBe(first.token);

    clock.advance(140_000); // 160 s of 300 left: still fresh
    expect((await id.jwtSvid(WEB, ['a', 'b'])).token).toBe(first.token);
    clock.advance(20_000); // 140 s left: less than half
    const renewed = await id.jwtSvid(WEB, ['a', 'b']);
    expect(renewed.token).not.toBe(first.token);
    expect(decodeJwt(renewed.token).iat).toBe(decodeJwt(first.token).iat! + 160);
  });

  it('share one signature among concurrent requests for the same pair', async () => {
    const id = await issuer();
    const tokens = await Promise.all(Array.from({ length: 20 }, () => id.jwtSvid(WEB, ['x'])));
    expect(new Set(tokens.map((t) => t.token)).size).toBe(1);
  });

  it('keep a bounded cache: the least recently used pair is forgotten', async () => {
    const clock = manualClock();
    const id = await issuer({}, { now: clock.now, jwtCacheSize: 3 });
    const a = await id.jwtSvid(WEB, ['a']);
    await id.jwtSvid(WEB, ['b']);
    await id.jwtSvid(WEB, ['c']);
    expect((await id.jwtSvid(WEB, ['a'])).token).toBe(a.token); // touch a: b is now the oldest
    await id.jwtSvid(WEB, ['d']); // evicts b
    clock.advance(1000); // so a re-mint is visible in iat
    const b2 = await id.jwtSvid(WEB, ['b']);
    expect(decodeJwt(b2.token).iat).toBe(decodeJwt(a.token).iat! + 1);
    expect((await id.jwtSvid(WEB, ['a'])).token).toBe(a.token);
  });

  it('refuse an empty audience', async () => {
    const id = await issuer();
    expect(await reason(id.jwtSvid(WEB, []))).toMatch(/audience must be specified/);
  });
});

describe('validateJwt', () => {
  it('accepts a good token and returns its SPIFFE ID and claims', async () => {
    const id = await issuer();
    const svid = await id.jwtSvid(WEB, ['api', 'other']);
    const result = await id.validateJwt(svid.token, 'other');
    expect(result.spiffeId).toBe(WEB.spiffeId);
    expect(result.claims).toMatchObject({ sub: WEB.spiffeId, aud: ['api', 'other'] });
    expect(typeof result.claims.exp).toBe('number');
  });

  it('rejects a token for another audience, with both audiences in the reason', async () => {
    const id = await issuer();
    const svid = await id.jwtSvid(WEB, ['api']);
    expect(await reason(id.validateJwt(svid.token, 'billing'))).toBe('token audience ["api"] does not include "billing"');
  });

  it('rejects an expired token', async () => {
    const clock = manualClock();
    const id = await issuer({ svid: { jwtTtl: '60s' } }, { now: clock.now });
    const svid = await id.jwtSvid(WEB, ['api']);
    clock.advance(59_000);
    await expect(id.validateJwt(svid.token, 'api')).resolves.toMatchObject({ spiffeId: WEB.spiffeId });
    clock.advance(2_000);
    expect(await reason(id.validateJwt(svid.token, 'api'))).toBe('token has expired');
  });

  it('rejects a token from another issuer: unknown kid, or a known kid with a foreign signature', async () => {
    const ours = await issuer();
    const theirs = await issuer();
    const foreign = await theirs.jwtSvid(WEB, ['api']);
    const foreignKid = decodeProtectedHeader(foreign.token).kid;
    expect(await reason(ours.validateJwt(foreign.token, 'api'))).toBe(`token key ID "${foreignKid}" is not in the trust domain's JWT bundle`);

    const ourKid = decodeProtectedHeader((await ours.jwtSvid(WEB, ['api'])).token).kid!;
    const impostor = await JwtKeySet.create({ retainMs: 60_000 });
    const forged = await new SignJWT({ aud: ['api'] })
      .setProtectedHeader({ alg: 'ES256', kid: ourKid, typ: 'JWT' })
      .setSubject(WEB.spiffeId)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(impostor.current.privateKey);
    expect(await reason(ours.validateJwt(forged, 'api'))).toMatch(/^token signature does not verify with key/);
  });

  it('rejects a tampered payload', async () => {
    const id = await issuer();
    const [h, , s] = (await id.jwtSvid(WEB, ['api'])).token.split('.');
    const payload = Buffer.from(JSON.stringify({ sub: 'spiffe://example.org/admin', aud: ['api'], exp: 9_999_999_999 })).toString('base64url');
    expect(await reason(id.validateJwt(`${h}.${payload}.${s}`, 'api'))).toMatch(/^token signature does not verify/);
  });

  it('rejects garbage, unsigned tokens and empty input', async () => {
    const id = await issuer();
    expect(await reason(id.validateJwt('not a token', 'api'))).toMatch(/^token is malformed/);
    expect(await reason(id.validateJwt('a.b.c', 'api'))).toMatch(/^token is malformed/);
    expect(await reason(id.validateJwt('', 'api'))).toBe('token is empty');
    const good = (await id.jwtSvid(WEB, ['api'])).token;
    expect(await reason(id.validateJwt(good, ''))).toMatch(/audience must be specified/);
    const header = decodeProtectedHeader(good);
    const none = `${Buffer.from(JSON.stringify({ ...header, alg: 'none' })).toString('base64url')}.${good.split('.')[1]}.`;
    expect(await reason(id.validateJwt(none, 'api'))).toMatch(/^token algorithm "none" is not allowed for JWT-SVIDs/);
    const noKid = `${Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'JWT' })).toString('base64url')}.${good.split('.').slice(1).join('.')}`;
    expect(await reason(id.validateJwt(noKid, 'api'))).toBe('token header has no kid');
  });
});

describe('X.509-SVIDs', () => {
  it('are leaves of the bundle CA with the SPIFFE ID as the only URI SAN, and a matching PKCS#8 key', async () => {
    const id = await issuer({ svid: { x509Ttl: '30m' } });
    const svid = await id.x509Svid(WEB);
    expect(svid.spiffeId).toBe(WEB.spiffeId);
    expect(svid.hint).toBe('web');

    const ca = new X509Certificate(id.x509BundleDer());
    const leaf = new X509Certificate(svid.certChainDer); // the chain is the leaf alone: the root is the bundle
    expect(ca.ca).toBe(true);
    expect(ca.subjectAltName).toBe('URI:spiffe://example.org');
    expect(leaf.ca).toBe(false);
    expect(leaf.checkIssued(ca)).toBe(true);
    expect(leaf.verify(ca.publicKey)).toBe(true);
    expect(leaf.verify(leaf.publicKey)).toBe(false);
    expect(leaf.publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    expect(Date.parse(leaf.validTo) - Date.parse(leaf.validFrom)).toBe(30 * 60_000);
    expect(Math.abs(Date.parse(leaf.validFrom) - Date.now())).toBeLessThan(60_000);

    const parsed = new px509.X509Certificate(svid.certChainDer);
    const san = parsed.getExtension(px509.SubjectAlternativeNameExtension)!;
    const uris = san.names.items.filter((n) => n.type === 'url').map((n) => n.value);
    expect(san.names.items.length).toBe(1);
    expect(uris).toEqual([WEB.spiffeId]);
    const usage = parsed.getExtension(px509.KeyUsagesExtension)!;
    expect(usage.usages).toBe(px509.KeyUsageFlags.digitalSignature);
    expect(usage.critical).toBe(true);
    expect(parsed.getExtension(px509.BasicConstraintsExtension)!.ca).toBe(false);
    const caUsage = new px509.X509Certificate(id.x509BundleDer()).getExtension(px509.KeyUsagesExtension)!;
    expect(caUsage.usages & px509.KeyUsageFlags.keyCertSign).toBeTruthy();

    const key = createPrivateKey({ key: svid.keyDer, format: 'der', type: 'pkcs8' });
    const data = Buffer.from('proof of possession');
    expect(verify('sha256', data, leaf.publicKey, sign('sha256', data, key))).toBe(true);
    const other = createPrivateKey({ key: (await id.x509Svid(DB)).keyDer, format: 'der', type: 'pkcs8' });
    expect(verify('sha256', data, leaf.publicKey, sign('sha256', data, other))).toBe(false);
  });

  it('are cached per SPIFFE ID until rotation', async () => {
    const id = await issuer();
    const first = await id.x509Svid(WEB);
    expect((await id.x509Svid({ ...WEB, hint: 'other' })).certChainDer.equals(first.certChainDer)).toBe(true);
    expect((await id.x509Svid(DB)).certChainDer.equals(first.certChainDer)).toBe(false);
    await id.rotate();
    const rotated = await id.x509Svid(WEB);
    expect(rotated.certChainDer.equals(first.certChainDer)).toBe(false);
    expect(new X509Certificate(rotated.certChainDer).verify(new X509Certificate(id.x509BundleDer()).publicKey)).toBe(true);
  });

  it('are refused for an ID outside the trust domain', async () => {
    const id = await issuer();
    expect(await reason(id.x509Svid({ spiffeId: 'spiffe://other.org/x', selectors: [] }))).toMatch(/must be in trust domain "example.org"/);
    expect(await reason(id.jwtSvid({ spiffeId: 'nope', selectors: [] }, ['a']))).toBe('spiffe_id must use the spiffe:// scheme, got "nope"');
  });
});

describe('rotation', () => {
  it('publishes a new signing key, keeps the previous one so old tokens still verify, and notifies listeners', async () => {
    const id = await issuer();
    let calls = 0;
    const off = id.onRotate(() => void calls++);
    const before = await id.jwtSvid(WEB, ['api']);
    await id.rotate();
    expect(calls).toBe(1);
    expect(id.generation).toBe(1);

    const jwks = JSON.parse(id.jwtBundleJson().toString()) as JSONWebKeySet;
    expect(jwks.keys).toHaveLength(2);
    const after = await id.jwtSvid(WEB, ['api']);
    expect(after.token).not.toBe(before.token);
    expect(decodeProtectedHeader(after.token).kid).toBe(jwks.keys[0]!.kid);
    expect(decodeProtectedHeader(before.token).kid).toBe(jwks.keys[1]!.kid);
    await expect(id.validateJwt(before.token, 'api')).resolves.toMatchObject({ spiffeId: WEB.spiffeId });
    await expect(id.validateJwt(after.token, 'api')).resolves.toMatchObject({ spiffeId: WEB.spiffeId });

    off();
    await id.rotate();
    expect(calls).toBe(1);
  });

  it('drops a retired key once every token it signed has expired', async () => {
    const clock = manualClock();
    const id = await issuer({ svid: { jwtTtl: '60s' } }, { now: clock.now });
    const old = await id.jwtSvid(WEB, ['api']);
    await id.rotate();
    clock.advance(61_000);
    await id.rotate();
    const kids = (JSON.parse(id.jwtBundleJson().toString()) as JSONWebKeySet).keys.map((k) => k.kid);
    expect(kids).toHaveLength(2);
    expect(kids).not.toContain(decodeProtectedHeader(old.token).kid);
  });

  it('runs on its timer at the configured interval and stops on close()', async () => {
    const id = await issuer({ svid: { rotationInterval: '40ms' } });
    expect(id.rotationIntervalMs).toBe(40);
    let calls = 0;
    const twice = new Promise<void>((resolve) => {
      id.onRotate(() => {
        if (++calls === 2) resolve();
      });
    });
    await twice;
    id.close();
    id.close(); // idempotent
    const seen = calls;
    await new Promise((r) => setTimeout(r, 200));
    expect(calls).toBe(seen);
  });

  it('defaults to half the X.509 TTL', async () => {
    const id = await issuer({ svid: { x509Ttl: '10m' } });
    expect(id.rotationIntervalMs).toBe(5 * 60_000);
  });
});

describe('entries', () => {
  it('match from the configured file, or derive IDs without one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'attestorm-identity-'));
    try {
      const file = join(dir, 'entries.yaml');
      await writeFile(file, 'entries:\n  - { spiffeId: "spiffe://example.org/web", selectors: ["k8s:ns:default"], hint: h }\n');
      const withFile = await issuer({ entries: file });
      const caller = [
        { type: 'k8s', value: 'ns:default' },
        { type: 'k8s', value: 'sa:api' },
      ];
      expect(withFile.match(caller)).toEqual([{ spiffeId: 'spiffe://example.org/web', selectors: [caller[0]], hint: 'h' }]);
      const derived = await issuer();
      expect(derived.match(caller).map((e) => e.spiffeId)).toEqual(['spiffe://example.org/ns/default/sa/api']);
      expect(derived.match([{ type: 'unix', value: 'gid:0' }])).toEqual([]);

      await writeFile(file, 'entries:\n  - { spiffeId: "spiffe://example.org/web", selectors: [] }\n');
      await expect(createIdentityIssuer(parseAgentConfig({ entries: file }))).rejects.toThrow(
        `${file}: entries[0].selectors must list at least one selector, got []`,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
