// Bad input to a bisect fails before anything is built, naming the flag and the rule: refs
// resolved in the checkout, the range's direction, the variant, its kind against the build.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { builderFor, checkBeforeBuilding, defaultBisectDir, resolveBisectSettings, stepScenario, stepSettings } from '../../src/bisect/index.js';
import { ConfigError } from '../../src/errors.js';
import { makeAgentRepo } from './support/agent-repo.js';

const root = mkdtempSync(join(tmpdir(), 'attestorm-bisect-settings-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const repo = makeAgentRepo(join(root, 'agent'), 4, 2);
const scenario = join(root, 'two.yaml');
writeFileSync(
  scenario,
  [
    'name: two',
    'duration: 5s',
    'variants:',
    '  - { name: ref, agent: { placement: pre-attestation } }',
    '  - { name: ref-unjudged, agent: { placement: disabled } }',
    '  - { name: spire, agent: { kind: spire, release: 1.15.3, binDirEnv: SPIRE_X } }',
    '  - { name: ext, agent: { kind: external, socket: /run/x.sock, pid: 1 } }',
    'expect:',
    '  ref: { oomKilled: false }',
    '  spire: { oomKilled: false }',
    '  ext: { oomKilled: false }',
    '',
  ].join('\n'),
);

async function problemsOf(p: Promise<unknown>): Promise<string[]> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConfigError);
  return (err as ConfigError).problems;
}

const asked = { scenario, source: repo.dir, good: repo.commits[0]!, bad: 'main', variant: 'ref', build: 'sh build.sh' };

describe('resolveBisectSettings', () => {
  it('resolves the refs to full commits in the checkout and the files to absolute paths', async () => {
    const s = await resolveBisectSettings({ ...asked, good: 'main~3' });
    expect(s).toMatchObject({
      good: { ref: 'main~3', commit: repo.commits[0] },
      bad: { ref: 'main', commit: repo.commits[3] },
      variant: 'ref',
      source: repo.dir,
      scenario,
    });
    expect(s.build).toEqual({ kind: 'command', command: 'sh build.sh' });
    expect(defaultBisectDir(s)).toBe(`reports/bisect-two-ref-${repo.commits[0]!.slice(0, 9)}-${repo.commits[3]!.slice(0, 9)}`);
  });

  it('names every missing flag at once', async () => {
    expect(await problemsOf(resolveBisectSettings({ scenario, variant: 'ref' }))).toEqual(['--source is required', '--good is required', '--bad is required']);
  });

  it('refuses refs that name no commit, an empty range and a range the wrong way round', async () => {
    expect(await problemsOf(resolveBisectSettings({ ...asked, good: 'v9.9.9' }))).toEqual([`--good v9.9.9: names no commit in ${repo.dir}`]);
    expect((await problemsOf(resolveBisectSettings({ ...asked, good: 'main' })))[0]).toMatch(/are the same commit/);
    expect((await problemsOf(resolveBisectSettings({ ...asked, good: 'main', bad: 'main~2' })))[0]).toMatch(
      /--bad main~2 is older than --good main .*swap them/,
    );
    expect((await problemsOf(resolveBisectSettings({ ...asked, source: join(root, 'nowhere') })))[0]).toMatch(/--source .*nowhere: no such folder/);
  });

  it('asks for --variant when the scenario has several, and refuses malformed or misplaced SPIRE build flags', async () => {
    const problems: string[] = [];
    stepSettings({ scenario }, problems);
    expect(problems[0]).toMatch(/--variant is required: .* has 4 variants \(ref, ref-unjudged, spire, ext\)/);
    expect(await problemsOf(resolveBisectSettings({ ...asked, replace: ['github.com/a/b=/opt/b'] }))).toContain(
      '--replace and --go-cache are for the SPIRE build; with --build, the command builds as it likes',
    );
    const p2: string[] = [];
    stepSettings({ scenario, variant: 'spire', replace: ['nonsense'] }, p2);
    expect(p2[0]).toMatch(/^--replace must be <module>\[@<version>\]=/);
  });
});

describe('checkBeforeBuilding', () => {
  const check = (variant: string, build?: string) => {
    const problems: string[] = [];
    const s = stepSettings({ scenario, variant, build }, problems)!;
    return problemsOf(checkBeforeBuilding(s.spec, builderFor(s.build)));
  };

  it('refuses a reference variant with the SPIRE build, one without expectations, an external one and an unknown one', async () => {
    expect((await check('ref'))[0]).toMatch(/--variant ref is a reference agent: the default build makes spire-server and spire-agent; give --build/);
    expect((await check('ref-unjudged', 'sh build.sh'))[0]).toMatch(
      /has no expectations for it, so every step would pass.*--set expect\.ref-unjudged\.oomKilled=false/,
    );
    expect((await check('ext', 'sh build.sh'))[0]).toMatch(/--variant ext: an external agent is not started by the harness/);
    expect((await check('nope', 'sh build.sh'))[0]).toMatch(/^--variant: "nope" is not a variant of two/);
  });

  it("drops a SPIRE variant's release and binary variable: a step builds a commit", () => {
    const problems: string[] = [];
    const s = stepSettings({ scenario, variant: 'spire', repetitions: 3 }, problems)!;
    expect(problems).toEqual([]);
    const step = stepScenario(s.spec, '/opt/build/bin');
    expect(step.loaded.scenario.variants.map((v) => v.name)).toEqual(['spire']);
    expect(step.loaded.scenario.repetitions).toBe(3);
    const agent = step.loaded.scenario.variants[0]!.agent as { binDir?: string; release?: string; binDirEnv?: string };
    expect(agent).toMatchObject({ binDir: '/opt/build/bin' });
    expect(agent.release).toBeUndefined();
    expect(agent.binDirEnv).toBeUndefined();
    expect(step.command).toBe(`attestorm run ${scenario} --variants spire --set 'variants.spire.agent.binDir="/opt/build/bin"' --repetitions 3`);
  });
});
