// The `spire` variant through the real runner: spire-server + spire-agent from SPIRE_BIN_DIR, real
// sandbox pods and workers, the agent in its memory cgroup under the shared supervisor. Short runs:
// an OOM kill detected and the agent restarted with a new join token; SPIRE's limiter rejections
// counted as rateLimited; SPIRE's metrics on the timeline; nothing left behind.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectCgroupHost } from '../../src/cgroup/index.js';
import type { LoadSample, RunResults, SampleLine } from '../../src/contract/index.js';
import { parseScenario, Progress, stormLoadDriver } from '../../src/scenario/index.js';
import { runScenario } from '../../src/runner/index.js';
import type { SpireMetricsSample } from '../../src/spire/index.js';

const BIN_DIR = process.env.SPIRE_BIN_DIR;
const { host, reason: cgroupReason } = detectCgroupHost();
const skipReason = !BIN_DIR
  ? 'SPIRE_BIN_DIR is unset (point it at a folder with spire-server and spire-agent to run these)'
  : !host
    ? `no writable cgroups: ${cgroupReason}`
    : null;
if (skipReason) console.warn(`test/spire/target-spire.slow.test.ts skipped: ${skipReason}`);

// Made on first use: a skipped file leaves nothing behind.
let out: string | null = null;
afterAll(() => {
  if (out) rmSync(out, { recursive: true, force: true });
});

function samplesOf(runDir: string, variant: string): SampleLine[] {
  return readFileSync(join(runDir, `${variant}.r1`, 'samples.ndjson'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as SampleLine);
}

/** The detail of every note event, in order. */
function notesOf(samples: SampleLine[]): string[] {
  return samples.filter((s) => s.kind === 'event' && s.type === 'note').map((s) => (s as { detail?: string }).detail ?? '');
}

function processesMentioning(needle: string): string[] {
  return execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes(needle) && !l.includes('ps -eo'));
}

async function run(name: string, variants: unknown[], load: Record<string, unknown>, duration = '8s') {
  const loaded = parseScenario({
    name,
    duration,
    warmup: '1s',
    agent: { binDir: BIN_DIR, startTimeout: '60s', cpu: { mode: 'cgroup', weight: 1000 }, restart: { initialBackoff: '500ms', maxBackoff: '2s' } },
    variants,
    load: { deadline: '200ms', retry: 'immediate', methods: { FetchJWTSVID: 1 }, ...load },
  });
  const lines: string[] = [];
  const sink = { write: (s: string) => lines.push(s) } as never;
  const outcome = await runScenario({
    loaded,
    load: stormLoadDriver,
    outDir: join((out ??= mkdtempSync(join(tmpdir(), 'attestorm-spire-target-'))), name),
    command: 'spire target test',
    render: false,
    progress: new Progress({ tty: false, stream: sink }),
    tableStream: sink,
  });
  const results = JSON.parse(readFileSync(join(outcome.runDir, 'results.json'), 'utf8')) as RunResults;
  console.log(
    lines
      .join('')
      .split('\n')
      .filter((l) => l.startsWith('|'))
      .join('\n'),
  );
  return { runDir: outcome.runDir, results };
}

describe.skipIf(skipReason !== null)('the spire variant (real SPIRE in the runner)', () => {
  it("SPIRE's limiter: rejections classified as rateLimited, SPIRE metrics on the timeline, the agent record says what ran", async () => {
    const { runDir, results } = await run(
      'spire-limited',
      // agent.env reaches the agent: Go's init trace (GODEBUG=inittrace=1) is printed to its log.
      [
        {
          name: 'spire-limited',
          agent: { kind: 'spire', memoryLimit: '256Mi', rateLimits: { fetch_jwt_svid: 5 }, heapProfiles: '2s', env: { GODEBUG: 'inittrace=1' } },
        },
      ],
      { pods: 2, workersPerPod: 4, connection: 'per-call' },
    );
    const v = results.variants[0]!;
    expect(v.error).toBeUndefined();
    expect(v.agent).toMatchObject({ kind: 'spire', placement: 'post-attestation', key: 'selector-set', binary: join(BIN_DIR!, 'spire-agent') });
    expect(v.agent.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(v.agent.env).toEqual({ GODEBUG: 'inittrace=1' });
    // Two pods × 5/s admitted at most (one selector set per pod); everything else is rejected.
    expect(v.rejectedRps).toBeGreaterThan(0);
    expect(v.okRps).toBeGreaterThan(0);
    const samples = samplesOf(runDir, 'spire-limited');
    const metrics = samples.filter((s): s is SpireMetricsSample => s.kind === 'metrics' && 'spire' in s);
    expect(metrics.length).toBeGreaterThan(3);
    const last = metrics[metrics.length - 1]!;
    expect(last.spire.rateLimitedByMethod['/SpiffeWorkloadAPI/FetchJWTSVID']).toBeGreaterThan(0);
    expect(last.spire.fetchJwtSvidByStatus.OK).toBeGreaterThan(0);
    expect(last.spire.attestationsByStatus.OK).toBeGreaterThan(0);
    expect(v.rejectionsByKeyType['selector-set']).toBeGreaterThan(0);
    const notes = notesOf(samples);
    expect(notes.some((n) => /spire: first JWT-SVID served/.test(n))).toBe(true);
    expect(notes.some((n) => /spire: \d+ pod entries created/.test(n))).toBe(true);
    for (const f of ['agent.conf', 'server.conf', 'agent.log', 'server.log']) expect(existsSync(join(runDir, 'spire-limited.r1', f)), f).toBe(true);
    // The Go runtime's figures ride on every scrape; heap profiles (gzip) land in the folder, each noted.
    expect(last.spire.runtime?.goroutines).toBeGreaterThan(10);
    expect(last.spire.runtime?.heapInuseBytes).toBeGreaterThan(1_000_000);
    const profiles = notes.map((n) => /spire heap profile (spire-heap-\d+ms\.pb\.gz)/.exec(n)?.[1]).filter((f): f is string => !!f);
    expect(profiles.length).toBeGreaterThan(2);
    for (const f of profiles) expect(readFileSync(join(runDir, 'spire-limited.r1', f)).subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    expect(readFileSync(join(runDir, 'spire-limited.r1', 'agent.conf'), 'utf8')).toMatch(/profiling_port/);
    expect(readFileSync(join(runDir, 'spire-limited.r1', 'agent.log'), 'utf8')).toContain('rate limiting enabled');
    expect(readFileSync(join(runDir, 'spire-limited.r1', 'agent.log'), 'utf8')).toMatch(/^init \S+ @\d/m);
    expect(processesMentioning(runDir)).toEqual([]);
  });

  it('the calls start once every pod\'s entry has reached the agent: no second of the storm says "no identity issued"', async () => {
    const { runDir, results } = await run(
      'spire-entries-first',
      [{ name: 'spire-open', agent: { kind: 'spire', memoryLimit: '256Mi' } }],
      { pods: 2, workersPerPod: 2, connection: 'per-call', deadline: '1s' },
      '3s',
    );
    const v = results.variants[0]!;
    expect(v.error).toBeUndefined();
    const samples = samplesOf(runDir, 'spire-open');
    const notes = notesOf(samples);
    expect(notes.some((n) => /spire: every pod \(2\) was served a JWT-SVID before the calls started \(waited \d+ ms\)/.test(n))).toBe(true);
    // The storm pods start with the load phase; their entries take ~10 s to reach the agent.
    const seconds = samples.filter((s): s is LoadSample => s.kind === 'load');
    expect(seconds.length).toBeGreaterThan(1);
    expect(seconds[0]!.ok).toBeGreaterThan(0);
    for (const sec of seconds) expect(sec.byCode.PERMISSION_DENIED ?? 0, `t=${sec.t}`).toBe(0);
  });

  it('a small memory limit: the kernel OOM-kills spire-agent, the runner counts it and restarts it with a new join token', async () => {
    const { runDir, results } = await run('spire-oom', [{ name: 'spire-oom', agent: { kind: 'spire', memoryLimit: '40Mi' } }], {
      pods: 3,
      workersPerPod: 8,
      connection: 'per-call',
    });
    const v = results.variants[0]!;
    expect(v.agent).toMatchObject({ kind: 'spire', placement: 'disabled', key: null });
    expect(v.deaths.filter((d) => d.cause === 'oom-kill').length, JSON.stringify(v.deaths)).toBeGreaterThan(0);
    expect(v.restarts).toBeGreaterThan(0);
    // Each start attested with its own token: the agent's log names one agent ID per token.
    const log = readFileSync(join(runDir, 'spire-oom.r1', 'agent.log'), 'utf8');
    const tokens = new Set([...log.matchAll(/spire\/agent\/join_token\/([0-9a-f-]{36})/g)].map((m) => m[1]));
    console.log(
      `OOM kills ${v.oomKills} (deaths ${v.deaths.length}), restarts ${v.restarts}, distinct join tokens ${tokens.size}, peak ${(v.peakMemoryBytes! / 2 ** 20).toFixed(1)} MiB`,
    );
    expect(tokens.size).toBeGreaterThanOrEqual(2);
    const events = samplesOf(runDir, 'spire-oom')
      .filter((s) => s.kind === 'event')
      .map((s) => (s as { type: string }).type);
    expect(events).toContain('oom-kill');
    expect(events).toContain('agent-restart');
    expect(processesMentioning(runDir)).toEqual([]);
  });

  it('pod churn: replacement pods get entries as they start, ended pods lose theirs', async () => {
    // SPIRE needs ~5–10 s (server cache reload + agent sync) before a new entry serves: pods live 10 s
    // so each gets served for a while before it is replaced (3 s lived too short on an idle machine).
    const { runDir, results } = await run(
      'spire-churn',
      [{ name: 'spire-churn', agent: { kind: 'spire', memoryLimit: '256Mi' } }],
      { pods: 2, workersPerPod: 2, connection: 'per-call', podLifetime: '10s' },
      '24s',
    );
    const v = results.variants[0]!;
    expect(v.error).toBeUndefined();
    const notes = notesOf(samplesOf(runDir, 'spire-churn'));
    const created = notes.filter((n) => /spire: \d+ pod entries created/.test(n));
    const deleted = notes.filter((n) => /spire: \d+ entries of ended pods deleted/.test(n));
    console.log(`churn: ${created.length} create batches, ${deleted.length} delete batches; last: ${deleted.at(-1)}`);
    expect(created.length).toBeGreaterThan(1);
    expect(deleted.length).toBeGreaterThan(0);
    expect(notes.filter((n) => n.includes('updating entries'))).toEqual([]);
    // Replacement pods wait for their entries (server cache reload + agent sync): until then SPIRE
    // answers PERMISSION_DENIED "no identity issued".
    const byCode: Record<string, number> = {};
    for (const s of samplesOf(runDir, 'spire-churn')) if (s.kind === 'load') for (const [k, n] of Object.entries(s.byCode)) byCode[k] = (byCode[k] ?? 0) + n;
    console.log(`churn: calls by code ${JSON.stringify(byCode)}`);
    expect(byCode.OK).toBeGreaterThan(0);
    expect(processesMentioning(runDir)).toEqual([]);
  });

  it('a spire-agent that cannot start fails the variant quoting its log, and leaves nothing running', async () => {
    const { runDir, results } = await run(
      'spire-bad',
      [{ name: 'spire-bad', agent: { kind: 'spire', memoryLimit: '256Mi', extraAgentConfig: { agent: { no_such_key: true } } } }],
      { pods: 1, workersPerPod: 1, connection: 'per-call' },
    );
    const v = results.variants[0]!;
    expect(v.error).toMatch(/exited before it was ready/);
    expect(v.error).toContain('no_such_key');
    expect(results.status).toBe('failed');
    expect(processesMentioning(runDir)).toEqual([]);
  });
});
