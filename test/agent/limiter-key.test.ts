import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAgentConfig } from '../../src/agent/config.js';
import { createKeyStrategy, registerKeyStrategy, keyStrategyNames } from '../../src/agent/limiter-key.js';
import { createPodUidKeyStrategy, detectKubernetesNode } from '../../src/agent/limiter-key-pod-uid.js';
import { selectorSetHash } from '../../src/agent/limiter-key-selector-set.js';
import type { CallerCreds, KeyContext } from '../../src/agent/types.js';
import { KEY_STRATEGIES } from '../../src/contract/index.js';
import { ConfigError } from '../../src/errors.js';

const CID = '9bca8d63d5fa610783847915bcff0ecac1273e5b4bed3f6fa1b07350e0135961';
const UID_A = '2c48913c-b29f-11e7-9350-020968147796';
const UID_B = '5f1e0c2a-0d3b-4a8e-9b7c-6d5e4f3a2b1c';

const tmp = mkdtempSync(join(tmpdir(), 'attestorm-limiter-key-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A fake proc root: /<pid>/cgroup files we control (the real /proc cannot be made to show pods here). */
function fakeProc(files: Record<number, string>): string {
  const root = mkdtempSync(join(tmp, 'proc-'));
  for (const [pid, text] of Object.entries(files)) {
    mkdirSync(join(root, pid));
    writeFileSync(join(root, pid, 'cgroup'), text);
  }
  return root;
}

function caller(pid: number, uid = 1000, startTime: string | null = '100'): CallerCreds {
  return { pid, uid, gid: uid, startTime };
}

const cfg = (over: object = {}) => parseAgentConfig(over);

describe('key strategy registry', () => {
  it('has the four strategies, one for every name the config accepts, and rejects unknown names', () => {
    expect(keyStrategyNames().sort()).toEqual(['os-uid', 'pod-uid', 'selector-set', 'spiffe-id']);
    expect(keyStrategyNames().sort()).toEqual([...KEY_STRATEGIES].sort());
    expect(() => createKeyStrategy('nope' as never, cfg())).toThrow(ConfigError);
    expect(() => createKeyStrategy('nope' as never, cfg())).toThrow(/rateLimit\.key must be one of .* got "nope"/);
  });

  it('declares which strategies need attestation results', () => {
    const need = Object.fromEntries((['pod-uid', 'os-uid', 'selector-set', 'spiffe-id'] as const).map((n) => [n, createKeyStrategy(n, cfg()).needsSelectors]));
    expect(need).toEqual({ 'pod-uid': false, 'os-uid': false, 'selector-set': true, 'spiffe-id': true });
  });

  it('accepts a new registration', () => {
    registerKeyStrategy('test-constant', () => ({ name: 'test-constant', needsSelectors: false, key: () => ({ key: 'k', keyType: 't' }) }));
    expect(createKeyStrategy('test-constant' as never, cfg()).key({ caller: caller(1) })).toEqual({ key: 'k', keyType: 't' });
  });
});

describe('os-uid', () => {
  it('keys by the OS UID', () => {
    const s = createKeyStrategy('os-uid', cfg());
    expect(s.key({ caller: caller(1, 1000) })).toEqual({ key: 'uid:1000', keyType: 'os_uid' });
    expect(s.key({ caller: caller(2, 0) })).toEqual({ key: 'uid:0', keyType: 'os_uid' });
  });
});

describe('selector-set', () => {
  const s = createKeyStrategy('selector-set', cfg());
  const sel = (type: string, value: string) => ({ type, value });

  it('is the SHA-256 of the sorted pairs, independent of order and duplicates', () => {
    const a: KeyContext = { caller: caller(1), selectors: [sel('unix', 'uid:0'), sel('k8s', 'ns:default'), sel('k8s', 'sa:api')] };
    const b: KeyContext = { caller: caller(2), selectors: [sel('k8s', 'sa:api'), sel('unix', 'uid:0'), sel('k8s', 'ns:default'), sel('k8s', 'sa:api')] };
    const ka = s.key(a);
    expect(ka.keyType).toBe('selector_set');
    expect(ka.key).toMatch(/^[0-9a-f]{64}$/);
    expect(s.key(b)).toEqual(ka);
    expect(selectorSetHash(a.selectors!)).toBe(ka.key);
  });

  it('differs when any pair differs, and the type/value boundary matters', () => {
    const base = s.key({ caller: caller(1), selectors: [sel('k8s', 'ns:default')] }).key;
    expect(s.key({ caller: caller(1), selectors: [sel('k8s', 'ns:other')] }).key).not.toBe(base);
    expect(s.key({ caller: caller(1), selectors: [sel('k8s:ns', 'default')] }).key).not.toBe(base);
  });

  it('is <unattested> with no selectors', () => {
    expect(s.key({ caller: caller(1), selectors: [] })).toEqual({ key: '<unattested>', keyType: 'selector_set' });
    expect(s.key({ caller: caller(1) })).toEqual({ key: '<unattested>', keyType: 'selector_set' });
  });
});

describe('spiffe-id', () => {
  const s = createKeyStrategy('spiffe-id', cfg());
  it('joins the sorted IDs; <no-identity> when none', () => {
    expect(s.key({ caller: caller(1), spiffeIds: ['spiffe://example.org/b', 'spiffe://example.org/a'] })).toEqual({
      key: 'spiffe://example.org/a,spiffe://example.org/b',
      keyType: 'spiffe_id',
    });
    expect(s.key({ caller: caller(1), spiffeIds: ['spiffe://example.org/a'] }).key).toBe('spiffe://example.org/a');
    expect(s.key({ caller: caller(1), spiffeIds: [] })).toEqual({ key: '<no-identity>', keyType: 'spiffe_id' });
    expect(s.key({ caller: caller(1) }).key).toBe('<no-identity>');
  });
});

describe('pod-uid', () => {
  it('keys pods by pod UID and non-pods by OS UID', () => {
    const procRoot = fakeProc({
      10: `0::/kubepods/besteffort/pod${UID_A}/${CID}\n`,
      11: `0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod${UID_B.replaceAll('-', '_')}.slice/cri-containerd-${CID}.scope\n`,
      12: '0::/user.slice\n',
    });
    const s = createKeyStrategy('pod-uid', cfg({ procRoot, rateLimit: { kubernetesNode: 'true' } }));
    expect(s.key({ caller: caller(10) })).toEqual({ key: `pod:${UID_A}`, keyType: 'pod_uid' });
    expect(s.key({ caller: caller(11) })).toEqual({ key: `pod:${UID_B}`, keyType: 'pod_uid' });
    expect(s.key({ caller: caller(12, 33) })).toEqual({ key: 'uid:33', keyType: 'os_uid' });
    // A process that is gone falls back to its UID.
    expect(s.key({ caller: caller(13, 44) })).toEqual({ key: 'uid:44', keyType: 'os_uid' });
  });

  it('caches per PID for the TTL, re-reads after it, and never across a PID reuse', () => {
    const procRoot = fakeProc({ 20: `0::/kubepods/pod${UID_A}/${CID}\n` });
    let t = 0;
    const s = createPodUidKeyStrategy({ procRoot, kubernetesNode: true, cacheTtlMs: 1000, now: () => t });
    expect(s.key({ caller: caller(20, 1, '100') }).key).toBe(`pod:${UID_A}`);
    // The process moves to another pod's cgroup (as a reused PID would appear).
    writeFileSync(join(procRoot, '20', 'cgroup'), `0::/kubepods/pod${UID_B}/${CID}\n`);
    t = 999;
    expect(s.key({ caller: caller(20, 1, '100') }).key).toBe(`pod:${UID_A}`); // cached
    expect(s.key({ caller: caller(20, 1, '200') }).key).toBe(`pod:${UID_B}`); // new start time: re-read
    writeFileSync(join(procRoot, '20', 'cgroup'), `0::/kubepods/pod${UID_A}/${CID}\n`);
    t = 999 + 1000;
    expect(s.key({ caller: caller(20, 1, '200') }).key).toBe(`pod:${UID_A}`); // TTL expired: re-read
  });

  it('bounds the cache: the oldest PID is evicted', () => {
    const files: Record<number, string> = {};
    for (let pid = 100; pid < 110; pid++) files[pid] = `0::/kubepods/pod${UID_A}/${CID}\n`;
    const procRoot = fakeProc(files);
    const s = createPodUidKeyStrategy({ procRoot, kubernetesNode: true, cacheTtlMs: 60_000, maxCacheEntries: 4, now: () => 0 });
    for (let pid = 100; pid < 110; pid++) s.key({ caller: caller(pid) });
    // PID 100 was evicted: a changed file shows; PID 109 is still cached: the change does not.
    writeFileSync(join(procRoot, '100', 'cgroup'), `0::/kubepods/pod${UID_B}/${CID}\n`);
    writeFileSync(join(procRoot, '109', 'cgroup'), `0::/kubepods/pod${UID_B}/${CID}\n`);
    expect(s.key({ caller: caller(100) }).key).toBe(`pod:${UID_B}`);
    expect(s.key({ caller: caller(109) }).key).toBe(`pod:${UID_A}`);
  });

  it('skips the cgroup read entirely on a non-Kubernetes node', () => {
    const procRoot = fakeProc({ 30: `0::/kubepods/pod${UID_A}/${CID}\n` });
    const s = createKeyStrategy('pod-uid', cfg({ procRoot, rateLimit: { kubernetesNode: 'false' } }));
    expect(s.key({ caller: caller(30, 7) })).toEqual({ key: 'uid:7', keyType: 'os_uid' });
  });

  it("auto-detects a Kubernetes node from the k8s attestor or the agent's own cgroup", () => {
    const self = join(tmp, 'self-cgroup');
    writeFileSync(self, '0::/user.slice\n');
    expect(detectKubernetesNode(cfg(), self)).toBe(false);
    expect(detectKubernetesNode(cfg({ attestors: ['unix', 'k8s'] }), self)).toBe(true);
    writeFileSync(self, `0::/kubepods/besteffort/pod${UID_A}/${CID}\n`);
    expect(detectKubernetesNode(cfg(), self)).toBe(true);
    expect(detectKubernetesNode(cfg({ rateLimit: { kubernetesNode: 'false' } }), self)).toBe(false);
    expect(detectKubernetesNode(cfg(), join(tmp, 'missing'))).toBe(false);
  });

  it('reads the real /proc for the test process itself (not in a pod here: OS UID)', () => {
    const s = createKeyStrategy('pod-uid', cfg({ rateLimit: { kubernetesNode: 'true' } }));
    const k = s.key({ caller: { pid: process.pid, uid: process.getuid!(), gid: process.getgid!(), startTime: null } });
    expect(k).toEqual({ key: `uid:${process.getuid!()}`, keyType: 'os_uid' });
  });
});
