// SPIRE configuration attestorm generates, without binaries: the HCL writer, the server and agent
// trees (limiter, kubelet access, extra settings), option validation and the entry file.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import {
  agentConfigTree,
  checkBatchOutput,
  checkDeleteOutput,
  entriesJson,
  kubeletAccessFor,
  limiterEnabled,
  mergeHcl,
  renderAgentConfig,
  renderHcl,
  renderServerConfig,
  type AgentConfigInput,
} from '../../src/spire/index.js';

const agentInput: AgentConfigInput = {
  trustDomain: 'attestorm.test',
  serverPort: 18081,
  dataDir: '/tmp/x/agent-data',
  socketPath: '/tmp/x/workload/api.sock',
  trustBundlePath: '/tmp/x/trust-bundle.pem',
  kubelet: { mode: 'read-only', port: 10255 },
  telemetryPort: 19090,
  healthPort: 19091,
};

describe('renderHcl', () => {
  it('writes scalars, lists, blocks and labelled blocks, quoting strings', () => {
    const text = renderHcl({
      agent: { trust_domain: 'a "b" \\ c', port: 8081, enabled: true, names: ['x', 'y'], skipped: null, gone: undefined },
      plugins: { 'KeyManager "memory"': { plugin_data: {} } },
    });
    expect(text).toBe(
      [
        'agent {',
        '  trust_domain = "a \\"b\\" \\\\ c"',
        '  port = 8081',
        '  enabled = true',
        '  names = ["x", "y"]',
        '}',
        'plugins {',
        '  KeyManager "memory" {',
        '    plugin_data {',
        '    }',
        '  }',
        '}',
        '',
      ].join('\n'),
    );
  });

  it('rejects keys that are not identifiers, naming the path', () => {
    expect(() => renderHcl({ agent: { 'bad key': 1 } })).toThrow(ConfigError);
    expect(() => renderHcl({ agent: { 'bad key': 1 } })).toThrow(/agent\.bad key: HCL keys must be identifiers/);
    expect(() => renderHcl({ agent: { list: [{ a: 1 }] as never } })).toThrow(/agent\.list\[0\] must be a string, number or boolean/);
    expect(() => renderHcl({ port: Infinity })).toThrow(/port must be a finite number/);
  });

  it('mergeHcl merges objects key by key, replaces scalars and removes keys set to null', () => {
    const merged = mergeHcl({ a: { b: 1, c: 2 }, d: 'x' }, { a: { c: 3, e: 4 }, d: null });
    expect(merged).toEqual({ a: { b: 1, c: 3, e: 4 } });
  });
});

describe('spire-server config', () => {
  it('uses loopback, SQLite, the memory key manager, join tokens and health checks under one folder', () => {
    const text = renderServerConfig({ trustDomain: 'attestorm.test', dir: '/tmp/srv', port: 18081, healthPort: 18082 });
    expect(text).toContain('bind_address = "127.0.0.1"');
    expect(text).toContain('bind_port = 18081');
    expect(text).toContain('socket_path = "/tmp/srv/server-admin.sock"');
    expect(text).toContain('DataStore "sql" {');
    expect(text).toContain('database_type = "sqlite3"');
    expect(text).toContain('connection_string = "/tmp/srv/server-data/datastore.sqlite3"');
    expect(text).toContain('KeyManager "memory" {');
    expect(text).toContain('NodeAttestor "join_token" {');
    // SPIRE reads the health port as a string.
    expect(text).toContain('bind_port = "18082"');
    expect(text).toContain('listener_enabled = true');
  });

  it('applies extra settings over the generated ones', () => {
    const text = renderServerConfig({ trustDomain: 'td', dir: '/s', port: 1, healthPort: 2, extra: { server: { ca_ttl: '1h', log_level: 'DEBUG' } } });
    expect(text).toContain('ca_ttl = "1h"');
    expect(text).toContain('log_level = "DEBUG"');
    expect(text).not.toContain('log_level = "INFO"');
  });
});

describe('spire-agent config', () => {
  it('points the k8s attestor at the read-only port and keeps the limiter off without limits', () => {
    const text = renderAgentConfig(agentInput);
    expect(text).toContain('server_address = "127.0.0.1"');
    expect(text).toContain('server_port = 18081');
    expect(text).toContain('trust_bundle_path = "/tmp/x/trust-bundle.pem"');
    expect(text).toContain('WorkloadAttestor "k8s" {');
    expect(text).toContain('kubelet_read_only_port = 10255');
    expect(text).toContain('WorkloadAttestor "unix" {');
    expect(text).toContain('Prometheus {\n    host = "127.0.0.1"\n    port = 19090');
    expect(text).toContain('bind_port = "19091"');
    expect(text).not.toContain('experimental');
    expect(text).not.toContain('join_token =');
  });

  it('writes SPIRE rate limits under agent.experimental.ratelimit', () => {
    const tree = agentConfigTree({ ...agentInput, rateLimits: { fetch_jwt_svid: 10, fetch_x509_svid: 5 } });
    expect((tree.agent as Record<string, unknown>).experimental).toEqual({ ratelimit: { fetch_x509_svid: 5, fetch_jwt_svid: 10 } });
    expect(renderAgentConfig({ ...agentInput, rateLimits: { fetch_jwt_svid: 10 } })).toMatch(/experimental \{\n {4}ratelimit \{\n {6}fetch_jwt_svid = 10\n/);
  });

  it('uses the secure port with CA and token files, or anonymous access without a token', () => {
    const secure = renderAgentConfig({
      ...agentInput,
      kubelet: { mode: 'secure', host: '127.0.0.1', port: 10250, caFile: '/ca.crt', tokenFile: '/token' },
      k8s: { pollRetryIntervalMs: 200, maxPollAttempts: 5 },
    });
    expect(secure).toContain('kubelet_secure_port = 10250');
    expect(secure).toContain('kubelet_ca_path = "/ca.crt"');
    expect(secure).toContain('token_path = "/token"');
    expect(secure).toContain('poll_retry_interval = "200ms"');
    expect(secure).toContain('max_poll_attempts = 5');
    expect(secure).not.toContain('node_name');
    const anon = renderAgentConfig({ ...agentInput, kubelet: { mode: 'secure', host: 'localhost', port: 10250, caFile: '/ca.crt', tokenFile: null } });
    expect(anon).toContain('use_anonymous_authentication = true');
    expect(anon).toContain('node_name = "localhost"');
  });
});

describe('kubeletAccessFor', () => {
  it('maps the emulator URL to SPIRE read-only or secure access', () => {
    expect(kubeletAccessFor('http://127.0.0.1:41234')).toEqual({ mode: 'read-only', port: 41234 });
    expect(kubeletAccessFor('https://127.0.0.1:41234', { caFile: '/ca', tokenFile: '/t' })).toEqual({
      mode: 'secure',
      host: '127.0.0.1',
      port: 41234,
      caFile: '/ca',
      tokenFile: '/t',
    });
  });

  it('rejects what SPIRE cannot reach, saying why', () => {
    expect(() => kubeletAccessFor('http://[::1]:41234')).toThrow(/always dialled on 127\.0\.0\.1/);
    expect(() => kubeletAccessFor('http://127.0.0.1:41234', { tokenFile: '/t' })).toThrow(/sends no token on the read-only port/);
    expect(() => kubeletAccessFor('https://127.0.0.1:41234')).toThrow(/needs the emulator's CA file/);
    expect(() => kubeletAccessFor('ftp://127.0.0.1:1')).toThrow(ConfigError);
    expect(() => kubeletAccessFor('not a url')).toThrow(/must be http\(s\):\/\/host:port/);
  });
});

describe('limiterEnabled', () => {
  it('is on when any limit is positive; SPIRE treats 0 as no limit', () => {
    expect(limiterEnabled(undefined)).toBe(false);
    expect(limiterEnabled({})).toBe(false);
    expect(limiterEnabled({ fetch_jwt_svid: 0 })).toBe(false);
    expect(limiterEnabled({ fetch_jwt_svid: 0, fetch_x509_svid: 3 })).toBe(true);
  });
});

describe('registration entries', () => {
  it('one entry per pod, selected by pod UID, under the alias', () => {
    const doc = entriesJson('td', 'spiffe://td/attestorm/node', [
      { uid: '11111111-2222-3333-4444-555555555555', name: 'storm-abc', namespace: 'storm' },
      { uid: '66666666-2222-3333-4444-555555555555' },
    ]);
    expect(doc.entries).toEqual([
      {
        spiffe_id: 'spiffe://td/ns/storm/pod/storm-abc',
        parent_id: 'spiffe://td/attestorm/node',
        selectors: [{ type: 'k8s', value: 'pod-uid:11111111-2222-3333-4444-555555555555' }],
      },
      {
        spiffe_id: 'spiffe://td/pod/66666666-2222-3333-4444-555555555555',
        parent_id: 'spiffe://td/attestorm/node',
        selectors: [{ type: 'k8s', value: 'pod-uid:66666666-2222-3333-4444-555555555555' }],
      },
    ]);
  });

  it('reads the batch answer: OK and AlreadyExists pass, anything else is listed', () => {
    expect(
      checkBatchOutput(
        JSON.stringify({
          results: [{ status: { code: 0, message: 'OK' } }, { status: { message: 'OK' } }, { status: { code: 6, message: 'similar entry already exists' } }],
        }),
        3,
      ),
    ).toEqual({ created: 2, existing: 1, ids: [null, null, null] });
    expect(() =>
      checkBatchOutput(JSON.stringify({ results: [{ status: { code: 3, message: 'invalid selector' }, entry: { spiffe_id: { path: '/pod/x' } } }] }), 1),
    ).toThrow(/refused 1 of 1 entries: \/pod\/x: code 3 invalid selector/);
    expect(() => checkBatchOutput('{"results":[]}', 2)).toThrow(/answered 0 results for 2 entries/);
    expect(() => checkBatchOutput('oops', 1)).toThrow(/printed no JSON/);
    expect(checkBatchOutput(JSON.stringify({ results: [{ status: { code: 0 }, entry: { id: 'e1' } }, { status: { code: 6 } }] }), 2).ids).toEqual(['e1', null]);
  });

  it('reads the delete answer: OK and NotFound pass', () => {
    expect(
      checkDeleteOutput(
        JSON.stringify({
          results: [
            { status: { code: 0 }, id: 'a' },
            { status: { code: 5, message: 'not found' }, id: 'b' },
          ],
        }),
        2,
      ),
    ).toBe(2);
    expect(() => checkDeleteOutput(JSON.stringify({ results: [{ status: { code: 7, message: 'denied' }, id: 'a' }] }), 1)).toThrow(
      /refused to delete 1 of 1 entries: a: code 7 denied/,
    );
  });
});

describe('limiterAnnouncement', () => {
  it("reads SPIRE's 'rate limiting enabled' line (text and JSON log formats)", async () => {
    const { limiterAnnouncement } = await import('../../src/spire/index.js');
    expect(
      limiterAnnouncement(
        'time="2026-12-01T04:00:00Z" level=info msg="Workload API/SDS rate limiting enabled" limit=10 method=/SpiffeWorkloadAPI/FetchJWTSVID subsystem_name=endpoints',
      ),
    ).toEqual({
      method: '/SpiffeWorkloadAPI/FetchJWTSVID',
      limit: 10,
      placement: 'post-attestation',
    });
    expect(
      limiterAnnouncement('{"level":"info","limit":5,"method":"/SpiffeWorkloadAPI/FetchX509SVID","msg":"Workload API/SDS rate limiting enabled"}'),
    ).toEqual({
      method: '/SpiffeWorkloadAPI/FetchX509SVID',
      limit: 5,
      placement: 'post-attestation',
    });
    expect(limiterAnnouncement('level=info msg="Starting agent APIs"')).toBeNull();
  });

  it('reads the placement a build with its limiter moved before attestation announces, and names a mismatch', async () => {
    const { limiterAnnouncement, placementMismatch, SpireAgentPlan } = await import('../../src/spire/index.js');
    const line =
      'level=info msg="Workload API/SDS rate limiting enabled" key=pod-uid limit=10 method=/SpiffeWorkloadAPI/FetchJWTSVID placement=pre-attestation';
    expect(limiterAnnouncement(line)).toEqual({ method: '/SpiffeWorkloadAPI/FetchJWTSVID', limit: 10, placement: 'pre-attestation' });
    const plan = (placement: 'pre-attestation' | 'post-attestation') =>
      new SpireAgentPlan('/b/spire-agent', '/c', '/s', '/d', 1, 2, { fetch_jwt_svid: 10 }, {}, placement);
    const seen = new Map([['/SpiffeWorkloadAPI/FetchJWTSVID', 'post-attestation' as const]]);
    expect(placementMismatch(plan('pre-attestation'), seen)).toBe(
      'the variant declares limiterPlacement pre-attestation, but /b/spire-agent announced its limiter post-attestation for /SpiffeWorkloadAPI/FetchJWTSVID',
    );
    expect(placementMismatch(plan('post-attestation'), seen)).toBeNull();
  });
});

describe('joinTokenRefusal', () => {
  it("recognises the server refusing a used or unknown join token in SPIRE's log", async () => {
    const { joinTokenRefusal } = await import('../../src/spire/index.js');
    expect(
      joinTokenRefusal(
        'time="x" level=warning msg="Failed to retrieve attestation result" error="failed to receive attestation response: rpc error: code = InvalidArgument desc = failed to attest: join token does not exist or has already been used" retry_interval=4.7s',
      ),
    ).toBe('the server refused its join token (join token does not exist or has already been used)');
    expect(joinTokenRefusal('level=info msg="Node attestation was successful"')).toBeNull();
  });
});
