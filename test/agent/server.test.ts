// The Workload API as a client sees it: a real agent on a socket in a temp dir, real grpc-js
// clients, SVIDs verified with independent code (jose for JWTs, node:crypto for X.509).
import { statSync } from 'node:fs';
import { createPrivateKey, sign, verify, X509Certificate } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromStruct } from '../../src/agent/index.js';
import type {
  JWTBundlesResponse__Output,
  JWTSVIDResponse__Output,
  ValidateJWTSVIDResponse__Output,
  X509BundlesResponse__Output,
  X509SVIDResponse__Output,
} from '../../src/proto/index.js';
import { firstMessage, header, splitDer, startTestAgent, tempDir, unary, type TestAgent } from './harness.js';

const uid = process.getuid!();
const myId = `spiffe://example.org/uid/${uid}`;

function statusOf(p: Promise<unknown>): Promise<{ code: number; details: string }> {
  return p.then(
    () => ({ code: grpc.status.OK, details: '' }),
    (e: grpc.ServiceError) => ({ code: e.code, details: e.details }),
  );
}

describe('Workload API on a Unix socket (derived identities)', () => {
  let t: TestAgent;
  beforeAll(async () => {
    t = await startTestAgent({ svid: { rotationInterval: '300ms' } });
  });
  afterAll(() => t?.stop());

  it('the socket admits every local uid (0777, as SPIRE does): callers are told apart by SO_PEERCRED', () => {
    expect(statSync(t.socketPath).mode & 0o777).toBe(0o777);
  });

  it('FetchJWTSVID returns an ES256 JWT-SVID that verifies against the JWKS from FetchJWTBundles', async () => {
    const c = t.client();
    const res = await unary<object, JWTSVIDResponse__Output>(c, 'FetchJWTSVID', { audience: ['svc-a', 'svc-b'] });
    expect(res.svids).toHaveLength(1);
    const svid = res.svids[0]!;
    expect(svid.spiffe_id).toBe(myId);
    const bundles = await firstMessage<JWTBundlesResponse__Output>(c, 'FetchJWTBundles');
    expect(Object.keys(bundles.bundles)).toEqual(['spiffe://example.org']);
    const jwks = createLocalJWKSet(JSON.parse(bundles.bundles['spiffe://example.org']!.toString('utf8')));
    const { payload, protectedHeader } = await jwtVerify(svid.svid, jwks, { audience: 'svc-b' });
    expect(payload.sub).toBe(myId);
    expect(payload.aud).toEqual(['svc-a', 'svc-b']);
    expect(protectedHeader.alg).toBe('ES256');
    expect(protectedHeader.typ).toBe('JWT');
    expect(typeof decodeProtectedHeader(svid.svid).kid).toBe('string');
    expect(payload.exp! - payload.iat!).toBe(300);
  });

  it('FetchX509SVID returns a chain that verifies against the bundle, with the SPIFFE ID as the only URI SAN', async () => {
    const res = await firstMessage<X509SVIDResponse__Output>(t.client(), 'FetchX509SVID');
    expect(res.svids).toHaveLength(1);
    const s = res.svids[0]!;
    expect(s.spiffe_id).toBe(myId);
    const chain = splitDer(s.x509_svid).map((d) => new X509Certificate(d));
    const roots = splitDer(s.bundle).map((d) => new X509Certificate(d));
    const leaf = chain[0]!;
    expect(leaf.subjectAltName).toBe(`URI:${myId}`);
    // Each certificate is signed by the next one, the last by a bundle root.
    for (let i = 0; i + 1 < chain.length; i++) expect(chain[i]!.verify(chain[i + 1]!.publicKey)).toBe(true);
    expect(roots.some((r) => chain[chain.length - 1]!.verify(r.publicKey))).toBe(true);
    // The key is PKCS#8 and belongs to the leaf.
    const key = createPrivateKey({ key: s.x509_svid_key, format: 'der', type: 'pkcs8' });
    const sig = sign('sha256', Buffer.from('hello'), key);
    expect(verify('sha256', Buffer.from('hello'), leaf.publicKey, sig)).toBe(true);
  });

  it('FetchX509Bundles returns the same CA keyed spiffe://<trust domain>', async () => {
    const c = t.client();
    const b = await firstMessage<X509BundlesResponse__Output>(c, 'FetchX509Bundles');
    const s = await firstMessage<X509SVIDResponse__Output>(c, 'FetchX509SVID');
    expect(Object.keys(b.bundles)).toEqual(['spiffe://example.org']);
    expect(b.bundles['spiffe://example.org']!.equals(s.svids[0]!.bundle)).toBe(true);
  });

  it('streams push an update on rotation and end on client cancel', async () => {
    const c = t.client();
    const call = c.FetchJWTBundles({}, header());
    const messages: JWTBundlesResponse__Output[] = [];
    await new Promise<void>((resolve, reject) => {
      call.on('data', (m: JWTBundlesResponse__Output) => {
        messages.push(m);
        if (messages.length === 2) resolve();
      });
      call.on('error', reject);
    });
    const keys = (m: JWTBundlesResponse__Output) =>
      (JSON.parse(m.bundles['spiffe://example.org']!.toString()) as { keys: { kid: string }[] }).keys.map((k) => k.kid);
    // Rotation adds a new signing key; the old one stays so outstanding tokens still verify.
    expect(keys(messages[1]!).length).toBeGreaterThan(keys(messages[0]!).length);
    const ended = new Promise<number>((resolve) => call.on('error', (e: grpc.ServiceError) => resolve(e.code)));
    call.cancel();
    expect(await ended).toBe(grpc.status.CANCELLED);
    // The agent still answers on the same connection.
    await expect(unary(c, 'FetchJWTSVID', { audience: ['x'] })).resolves.toBeTruthy();
  });

  it('ValidateJWTSVID accepts a good token and returns its claims as a Struct', async () => {
    const c = t.client();
    const { svids } = await unary<object, JWTSVIDResponse__Output>(c, 'FetchJWTSVID', { audience: ['db'] });
    const res = await unary<object, ValidateJWTSVIDResponse__Output>(c, 'ValidateJWTSVID', { audience: 'db', svid: svids[0]!.svid });
    expect(res.spiffe_id).toBe(myId);
    const claims = fromStruct(res.claims);
    expect(claims.sub).toBe(myId);
    expect(claims.aud).toEqual(['db']);
    expect(typeof claims.exp).toBe('number');
  });

  it('ValidateJWTSVID rejects a tampered token, a wrong audience, and empty fields with InvalidArgument', async () => {
    const c = t.client();
    const { svids } = await unary<object, JWTSVIDResponse__Output>(c, 'FetchJWTSVID', { audience: ['db'] });
    const token = svids[0]!.svid;
    const [h, p, s] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p!, 'base64url').toString()), sub: 'spiffe://example.org/admin' })).toString(
      'base64url',
    );
    const cases: Array<[object, RegExp]> = [
      [{ audience: 'db', svid: `${h}.${forged}.${s}` }, /./],
      [{ audience: 'other', svid: token }, /aud/i],
      [{ audience: 'db', svid: 'not-a-jwt' }, /./],
      [{ audience: '', svid: token }, /^audience must be specified$/],
      [{ audience: 'db', svid: '' }, /^svid must be specified$/],
    ];
    for (const [req, msg] of cases) {
      const r = await statusOf(unary(c, 'ValidateJWTSVID', req));
      expect(r.code, JSON.stringify(req)).toBe(grpc.status.INVALID_ARGUMENT);
      expect(r.details).toMatch(msg);
    }
  });

  it('FetchJWTSVID without audience is InvalidArgument "audience must be specified"', async () => {
    const r = await statusOf(unary(t.client(), 'FetchJWTSVID', { audience: [] }));
    expect(r).toEqual({ code: grpc.status.INVALID_ARGUMENT, details: 'audience must be specified' });
  });

  it('FetchJWTSVID with an invalid spiffe_id is InvalidArgument; with one not issued, PermissionDenied', async () => {
    const c = t.client();
    for (const bad of ['not-a-uri', 'https://example.org/x', 'spiffe://Example.org/x', 'spiffe://example.org/a//b']) {
      const r = await statusOf(unary(c, 'FetchJWTSVID', { audience: ['a'], spiffe_id: bad }));
      expect(r.code, bad).toBe(grpc.status.INVALID_ARGUMENT);
      expect(r.details).toMatch(/^invalid requested SPIFFE ID: spiffe_id must/);
    }
    const other = await statusOf(unary(c, 'FetchJWTSVID', { audience: ['a'], spiffe_id: 'spiffe://example.org/someone-else' }));
    expect(other).toEqual({ code: grpc.status.PERMISSION_DENIED, details: 'no identity issued' });
    const mine = await unary<object, JWTSVIDResponse__Output>(c, 'FetchJWTSVID', { audience: ['a'], spiffe_id: myId });
    expect(mine.svids.map((s) => s.spiffe_id)).toEqual([myId]);
  });

  describe('the security header', () => {
    const bad: Array<[string, grpc.Metadata]> = [
      ['missing', new grpc.Metadata()],
      ['wrong value', header(['false'])],
      ['duplicated', header(['true', 'true'])],
    ];
    for (const [what, md] of bad) {
      it(`${what}: every method answers InvalidArgument "security header missing from request"`, async () => {
        const c = t.client();
        const want = { code: grpc.status.INVALID_ARGUMENT, details: 'security header missing from request' };
        expect(await statusOf(unary(c, 'FetchJWTSVID', { audience: ['a'] }, md))).toEqual(want);
        expect(await statusOf(unary(c, 'ValidateJWTSVID', { audience: 'a', svid: 'x' }, md))).toEqual(want);
        for (const m of ['FetchX509SVID', 'FetchX509Bundles', 'FetchJWTBundles'] as const) {
          expect(await statusOf(firstMessage(c, m, md)), m).toEqual(want);
        }
      });
    }
  });

  it('methods the agent does not serve (WIT-SVID) answer Unimplemented', async () => {
    const raw = new grpc.Client(`unix:${t.socketPath}`, grpc.credentials.createInsecure());
    try {
      for (const path of ['/SpiffeWorkloadAPI/FetchWITSVID', '/SpiffeWorkloadAPI/FetchWITBundles', '/Other/Method']) {
        const r = await new Promise<grpc.ServiceError | null>((resolve) =>
          raw.makeUnaryRequest(
            path,
            () => Buffer.alloc(0),
            (b: Buffer) => b,
            {},
            header(),
            (err) => resolve(err),
          ),
        );
        expect(r?.code, path).toBe(grpc.status.UNIMPLEMENTED);
      }
    } finally {
      raw.close();
    }
  });

  it('counts calls by method and status code on /metrics', async () => {
    const text = await (await fetch(t.agent.metricsUrl!)).text();
    expect(text).toMatch(/^workload_api_calls_total\{method="FetchJWTSVID",code="OK"\} [1-9]/m);
    expect(text).toMatch(/^workload_api_calls_total\{method="FetchJWTSVID",code="INVALID_ARGUMENT"\} [1-9]/m);
    expect(text).toMatch(/^workload_api_open_connections [1-9]/m);
    expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes \d+/m);
    expect(text).toMatch(/^workload_api_attestation_duration_seconds_count [1-9]/m);
    expect(text).toMatch(/^workload_api_attestations_inflight 0/m);
    expect(text).toMatch(/^workload_api_kubelet_fetches_total\{outcome="ok"\} 0/m);
  });
});

describe('Workload API with an entries file', () => {
  let t: TestAgent;
  let dir: string;
  beforeAll(async () => {
    dir = tempDir();
    const entries = join(dir, 'entries.yaml');
    writeFileSync(
      entries,
      [
        'entries:',
        `  - spiffeId: spiffe://example.org/web`,
        `    selectors: ["unix:uid:${uid}"]`,
        `    hint: web`,
        `  - spiffeId: spiffe://example.org/db`,
        `    selectors: ["unix:uid:${uid}", "unix:gid:${process.getgid!()}"]`,
        `  - spiffeId: spiffe://example.org/nobody`,
        `    selectors: ["unix:uid:4242424"]`,
      ].join('\n'),
    );
    t = await startTestAgent({ entries });
  });
  afterAll(async () => {
    await t?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('issues every matching entry, with hints, and only the requested one when spiffe_id is set', async () => {
    const c = t.client();
    const all = await unary<object, JWTSVIDResponse__Output>(c, 'FetchJWTSVID', { audience: ['a'] });
    expect(all.svids.map((s) => [s.spiffe_id, s.hint]).sort()).toEqual([
      ['spiffe://example.org/db', ''],
      ['spiffe://example.org/web', 'web'],
    ]);
    const one = await unary<object, JWTSVIDResponse__Output>(c, 'FetchJWTSVID', { audience: ['a'], spiffe_id: 'spiffe://example.org/db' });
    expect(one.svids.map((s) => s.spiffe_id)).toEqual(['spiffe://example.org/db']);
    const x = await firstMessage<X509SVIDResponse__Output>(c, 'FetchX509SVID');
    expect(x.svids.map((s) => s.spiffe_id).sort()).toEqual(['spiffe://example.org/db', 'spiffe://example.org/web']);
    const denied = await statusOf(unary(c, 'FetchJWTSVID', { audience: ['a'], spiffe_id: 'spiffe://example.org/nobody' }));
    expect(denied).toEqual({ code: grpc.status.PERMISSION_DENIED, details: 'no identity issued' });
  });
});

describe('Workload API for a caller no entry matches', () => {
  let t: TestAgent;
  let dir: string;
  beforeAll(async () => {
    dir = tempDir();
    const entries = join(dir, 'entries.yaml');
    writeFileSync(entries, 'entries:\n  - spiffeId: spiffe://example.org/x\n    selectors: ["unix:uid:4242424"]\n');
    t = await startTestAgent({ entries });
  });
  afterAll(async () => {
    await t?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers PermissionDenied "no identity issued" to fetches, but still validates tokens', async () => {
    const c = t.client();
    const want = { code: grpc.status.PERMISSION_DENIED, details: 'no identity issued' };
    expect(await statusOf(unary(c, 'FetchJWTSVID', { audience: ['a'] }))).toEqual(want);
    for (const m of ['FetchX509SVID', 'FetchX509Bundles', 'FetchJWTBundles'] as const) {
      expect(await statusOf(firstMessage(c, m)), m).toEqual(want);
    }
    const v = await statusOf(unary(c, 'ValidateJWTSVID', { audience: 'a', svid: 'x.y.z' }));
    expect(v.code).toBe(grpc.status.INVALID_ARGUMENT);
  });
});
