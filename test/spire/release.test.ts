// SPIRE releases: the version a spire-agent prints, the grammar of each release, and the refusal
// of settings a release lacks, before anything starts. Stand-in binaries (shell scripts printing a
// release's version line, as SPIRE's print theirs) stand for builds this machine may not have;
// real builds are checked too when SPIRE_BIN_DIR_<release> names them.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, PlatformError, PreflightError, PreflightFailure } from '../../src/errors.js';
import { preflightVariants, readScenarioFile } from '../../src/scenario/index.js';
import {
  compareVersions,
  grammarProblems,
  parseSpireVersion,
  preflightSpireVariant,
  renderAgentConfig,
  spireAgentGrammar,
  spireVersion,
  versionOf,
  type AgentConfigInput,
} from '../../src/spire/index.js';

const root = mkdtempSync(join(tmpdir(), 'attestorm-spirerel-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A STAND-IN build: spire-server and spire-agent scripts that print `line` for --version on stderr. */
function standIn(name: string, line: string): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  for (const file of ['spire-server', 'spire-agent']) {
    writeFileSync(join(dir, file), `#!/bin/sh\necho "${line}" >&2\n`);
    chmodSync(join(dir, file), 0o755);
  }
  return dir;
}

const ver = (s: string) => parseSpireVersion(s)!;

describe('parseSpireVersion', () => {
  it('reads releases, development builds and a leading v', () => {
    expect(parseSpireVersion('1.10.4')).toMatchObject({ major: 1, minor: 10, patch: 4, suffix: null });
    expect(parseSpireVersion('1.16.0-dev-unk')).toMatchObject({ major: 1, minor: 16, patch: 0, suffix: 'dev-unk' });
    expect(parseSpireVersion('v1.15.3')).toMatchObject({ major: 1, minor: 15, patch: 3 });
    expect(parseSpireVersion('no version here')).toBeNull();
  });

  it('orders by number, not by text', () => {
    expect(compareVersions(ver('1.10.4'), ver('1.9.9'))).toBeGreaterThan(0);
    expect(compareVersions(ver('1.15.2'), ver('1.15.10'))).toBeLessThan(0);
    expect(compareVersions(ver('1.16.0-dev-unk'), ver('1.16.0'))).toBe(0);
  });

  it('names the binary and what it printed when there is no version', () => {
    expect(() => versionOf('/x/spire-agent', 'hello')).toThrow(PlatformError);
    expect(() => versionOf('/x/spire-agent', 'hello')).toThrow(/\/x\/spire-agent --version printed "hello", which names no version/);
  });
});

describe('grammar per release', () => {
  it('has the Workload API limiter from 1.15.2 on, not before', () => {
    expect(spireAgentGrammar(ver('1.15.0')).rateLimitKeys).toEqual([]);
    expect(spireAgentGrammar(ver('1.14.7')).rateLimitKeys).toEqual([]);
    expect(spireAgentGrammar(ver('1.15.2')).rateLimitKeys).toContain('fetch_jwt_svid');
    expect(spireAgentGrammar(ver('1.16.0-dev-unk')).rateLimitKeys).toHaveLength(6);
  });

  it('refuses rate limits before 1.15.2 by name, with the release and the first one that has them', () => {
    const problems = grammarProblems(ver('1.14.7'), { rateLimits: { fetch_jwt_svid: 10, fetch_x509_svid: 0 } }, 'variants[4] (v1-14-7).agent.');
    expect(problems).toEqual([
      'variants[4] (v1-14-7).agent.rateLimits.fetch_jwt_svid is set (10), but SPIRE 1.14.7 (1.14.7) has no agent.experimental.ratelimit.fetch_jwt_svid: ' +
        "SPIRE's Workload API rate limiter first shipped in 1.15.2; drop the setting for this release or use 1.15.2 or later",
    ]);
    expect(grammarProblems(ver('1.15.2'), { rateLimits: { fetch_jwt_svid: 10 } })).toEqual([]);
  });

  it('refuses the same block written through extraAgentConfig', () => {
    const problems = grammarProblems(ver('1.10.4'), { extraAgentConfig: { agent: { experimental: { ratelimit: { fetch_x509_svid: 5 } } } } });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^extraAgentConfig\.agent\.experimental\.ratelimit\.fetch_x509_svid is set, but SPIRE 1\.10\.4/);
  });

  it('refuses releases older than the oldest grammar it knows', () => {
    expect(grammarProblems(ver('1.9.6'), {}, 'agent.')[0]).toMatch(/^agent: SPIRE 1\.9\.6 \(1\.9\.6\) is older than 1\.10\.0/);
  });

  it('writes no ratelimit block a release cannot read, and the same k8s keys for every release', () => {
    const input: AgentConfigInput = {
      trustDomain: 'td.test',
      serverPort: 8081,
      dataDir: '/d',
      socketPath: '/s',
      trustBundlePath: '/b',
      kubelet: { mode: 'read-only', port: 10255 },
      telemetryPort: 1,
      healthPort: 2,
      k8s: { pollRetryIntervalMs: 500, maxPollAttempts: 6 },
    };
    const old = renderAgentConfig({ ...input, grammar: spireAgentGrammar(ver('1.10.4')) });
    expect(old).not.toContain('ratelimit');
    expect(old).toContain('max_poll_attempts = 6');
    expect(() => renderAgentConfig({ ...input, rateLimits: { fetch_jwt_svid: 10 }, grammar: spireAgentGrammar(ver('1.15.0')) })).toThrow(ConfigError);
    expect(renderAgentConfig({ ...input, rateLimits: { fetch_jwt_svid: 10 }, grammar: spireAgentGrammar(ver('1.15.3')) })).toMatch(
      /ratelimit \{\n\s+fetch_jwt_svid = 10/,
    );
  });
});

describe('preflight of a SPIRE variant', () => {
  const v1147 = standIn('1.14.7', '1.14.7');
  const dev = standIn('main', '1.16.0-dev-unk');

  it('skips a variant whose environment variable is unset or empty, with the reason', async () => {
    expect(await preflightSpireVariant({ binDirEnv: 'SPIRE_BIN_DIR_1_14_7' }, 'v.agent.', {})).toEqual({
      kind: 'skip',
      reason: "$SPIRE_BIN_DIR_1_14_7 is not set: it names the folder of this variant's spire-server and spire-agent (or give v.agent.binDir)",
    });
    expect(await preflightSpireVariant({ binDirEnv: 'X' }, '', { X: '' })).toMatchObject({ kind: 'skip', reason: expect.stringMatching(/^\$X is empty/) });
  });

  it('reads the release from the folder the variable names, binDir winning over it', async () => {
    const fromEnv = await preflightSpireVariant({ binDirEnv: 'B', release: '1.14.7' }, '', { B: v1147 });
    expect(fromEnv).toMatchObject({ kind: 'checked', binDir: v1147, problems: [] });
    const given = await preflightSpireVariant({ binDir: dev, binDirEnv: 'B' }, '', { B: v1147 });
    expect(given).toMatchObject({ kind: 'checked', binDir: dev });
    if (given.kind === 'checked') expect(given.grammar.rateLimitKeys).toContain('fetch_jwt_svid');
  });

  it('names a release mismatch and a setting the release lacks', async () => {
    const r = await preflightSpireVariant({ binDir: v1147, release: '1.15.3', rateLimits: { fetch_jwt_svid: 10 } }, 'a.', {});
    expect(r.kind === 'checked' && r.problems).toEqual([
      `a.release is 1.15.3, but ${join(v1147, 'spire-agent')} --version says "1.14.7"; point the variant at a 1.15.3 build`,
      expect.stringMatching(/^a\.rateLimits\.fetch_jwt_svid is set \(10\), but SPIRE 1\.14\.7/),
    ]);
  });

  it('a variable that points at no build is a preflight failure naming the folder and the fix', async () => {
    const err = await preflightSpireVariant({ binDirEnv: 'B' }, 'v.agent.', { B: join(root, 'nowhere') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PreflightFailure);
    expect((err as PreflightFailure).code).toBe('ATTESTORM_ERR_SPIRE_BINARY');
    expect((err as PreflightFailure).message).toMatch(/^v\.agent: spire-server not found: looked in binDir .*nowhere/);
    expect((err as PreflightFailure).fix).toMatch(
      /^point v\.agent\.binDir \(or SPIRE_BIN_DIR\) at a folder with spire-server and spire-agent built for this host \(linux-/,
    );
  });

  it('a spire-server that does not run on this host (not an executable of this machine) is named, though spire-agent runs', async () => {
    const foreign = standIn('foreign', '1.15.3');
    // A broken ELF header: execve refuses it (ENOEXEC), as it refuses an arm64 build here, and the shell
    // that execvp then hands it to cannot run it either.
    writeFileSync(join(foreign, 'spire-server'), Buffer.concat([Buffer.from('\x7fELF\x02\x01\x01', 'latin1'), Buffer.alloc(57)]));
    const err = await preflightSpireVariant({ binDir: foreign }, 'v.agent.', {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PreflightFailure);
    expect((err as PreflightFailure).message).toMatch(
      new RegExp(`^v\\.agent: SPIRE does not run on this host: ${join(foreign, 'spire-server')} --version failed: `),
    );
    expect((err as PreflightFailure).message).not.toContain('spire-agent --version');
  });
});

describe('preflight of a scenario', () => {
  const v1147 = standIn('s-1.14.7', '1.14.7');
  const v1153 = standIn('s-1.15.3', '1.15.3');
  const file = join(root, 'releases.yaml');
  writeFileSync(
    file,
    [
      'name: rel',
      'variants:',
      '  - { name: old, agent: { kind: spire, binDirEnv: T_OLD, release: 1.14.7 } }',
      '  - { name: new, agent: { kind: spire, binDirEnv: T_NEW, release: 1.15.3, rateLimits: { fetch_jwt_svid: 10 } } }',
      '  - { name: ref, agent: { kind: reference, placement: disabled } }',
      'expect:',
      '  new: { oomKilled: false, maxPeakRatio: { to: old, value: 1 } }',
      '  old: { oomKilled: true }',
    ].join('\n'),
  );

  it('skips the variants without binaries, drops their expectations and keeps the rest', async () => {
    const { scenario } = readScenarioFile(file);
    const out = await preflightVariants(scenario, { T_NEW: v1153 });
    expect(out.scenario.variants.map((v) => v.name)).toEqual(['new', 'ref']);
    expect(out.skipped).toEqual([{ name: 'old', reason: expect.stringMatching(/^\$T_OLD is not set/) }]);
    expect(out.dropped).toEqual(['new.maxPeakRatio (compares with old, not run)', 'old.oomKilled (variant not run)']);
    expect(out.scenario.expect.new).toMatchObject({ oomKilled: false });
    const spire = out.scenario.variants[0]!.agent;
    expect(spire.kind === 'spire' && spire.binDir).toBe(v1153);
  });

  it('refuses every setting a release lacks at once, before anything starts', async () => {
    const { scenario } = readScenarioFile(file, {}, ['variants.old.agent.rateLimits.fetch_jwt_svid=5', 'variants.old.agent.rateLimits.fetch_jwt_bundles=2']);
    const err = await preflightVariants(scenario, { T_OLD: v1147, T_NEW: v1153 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual([
      expect.stringMatching(/^variants\[0\] \(old\)\.agent\.rateLimits\.fetch_jwt_svid is set \(5\), but SPIRE 1\.14\.7/),
      expect.stringMatching(/^variants\[0\] \(old\)\.agent\.rateLimits\.fetch_jwt_bundles is set \(2\), but SPIRE 1\.14\.7/),
    ]);
  });

  it("reports a variant's SPIRE that does not run with the machine's failures, all at once", async () => {
    const { scenario } = readScenarioFile(file, {}, []);
    const machine = new PreflightFailure('ATTESTORM_ERR_LOOPBACK', 'loopback is down', 'ip link set lo up');
    const err = await preflightVariants(scenario, { T_OLD: join(root, 'nowhere'), T_NEW: v1153 }, [machine]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PreflightError);
    expect((err as PreflightError).failures.map((f) => f.code)).toEqual(['ATTESTORM_ERR_LOOPBACK', 'ATTESTORM_ERR_SPIRE_BINARY']);
    expect((err as PreflightError).message).toMatch(
      /^this machine cannot hold the run \(nothing was started\):\n {2}- loopback is down; fix: ip link set lo up \[ATTESTORM_ERR_LOOPBACK\]\n {2}- variants\[0\] \(old\)\.agent: spire-server not found/,
    );
  });

  it('says which variants were skipped when none can run', async () => {
    const { scenario } = readScenarioFile(file, {}, []);
    const only = { ...scenario, variants: scenario.variants.filter((v) => v.name !== 'ref') };
    await expect(preflightVariants(only, {})).rejects.toThrow(/no variant of rel can run: old skipped \(\$T_OLD is not set.*new skipped \(\$T_NEW is not set/);
  });
});

// Real builds, when the machine has them: the release each prints and the grammar it gets.
const RELEASES = ['1.10.4', '1.11.3', '1.12.6', '1.13.6', '1.14.7', '1.15.0', '1.15.2', '1.15.3'];
describe('real SPIRE releases', () => {
  for (const release of RELEASES) {
    const dir = process.env[`SPIRE_BIN_DIR_${release.replace(/\./g, '_')}`];
    const have = dir !== undefined && existsSync(join(dir, 'spire-agent'));
    if (!have) console.log(`skipped: SPIRE ${release} (SPIRE_BIN_DIR_${release.replace(/\./g, '_')} names no build)`);
    it.skipIf(!have)(`${release}: --version names the release; rate limits ${release >= '1.15.2' ? 'accepted' : 'refused'}`, async () => {
      const version = versionOf(join(dir!, 'spire-agent'), await spireVersion(join(dir!, 'spire-agent')));
      expect(`${version.major}.${version.minor}.${version.patch}`).toBe(release);
      const r = await preflightSpireVariant({ binDir: dir!, release, rateLimits: { fetch_jwt_svid: 10 } }, '', {});
      expect(r.kind === 'checked' && r.problems.length).toBe(compareVersions(version, ver('1.15.2')) >= 0 ? 0 : 1);
    });
  }
});
