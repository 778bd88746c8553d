// Which SPIRE build a cluster run's spire variants use, decided before anything starts; the image
// names keyed by the build. Real files in a temp folder (executable or not), no cluster.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { planSpireImages, spireBinDirProblems, spireImageRefs } from '../../src/local-cluster/index.js';

const dir = mkdtempSync(join(tmpdir(), 'attestorm-spire-bins-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const good = join(dir, 'good');
const half = join(dir, 'half');
for (const [d, files] of [
  [good, ['spire-server', 'spire-agent']],
  [half, ['spire-server']],
] as const) {
  rmSync(d, { recursive: true, force: true });
  mkdirSync(d);
  for (const f of files) {
    writeFileSync(join(d, f), '#!/bin/sh\n');
    chmodSync(join(d, f), 0o755);
  }
}
const spire = (name: string, binDir?: string) => ({ name, agent: { kind: 'spire', ...(binDir ? { binDir } : {}) } });

describe('planSpireImages', () => {
  it('on the local cluster: SPIRE_BIN_DIR, or agent.binDir first; reference variants untouched', () => {
    const p = planSpireImages([spire('a'), spire('b', half), { name: 'ref', agent: { kind: 'reference' } }], {
      site: 'local-cluster',
      context: 'context attestorm-local',
      env: { SPIRE_BIN_DIR: good, PATH: '' },
    });
    expect(p.binDirs.get('a')).toBe(good);
    expect(p.binDirs.has('b')).toBe(false);
    expect(p.problems).toEqual([`variants.b: agent.binDir ${half} has no executable spire-agent`]);
  });

  it('on the local cluster without binaries: refused by variant name, saying what to set', () => {
    const p = planSpireImages([spire('spire-off')], { site: 'local-cluster', context: 'context attestorm-local', env: { PATH: '' } });
    expect(p.problems).toHaveLength(1);
    expect(p.problems[0]).toMatch(/^variants\.spire-off: .*set SPIRE_BIN_DIR/);
  });

  it('on kind: the binaries named by agent.binDir or SPIRE_BIN_DIR, else the public images (never PATH)', () => {
    const named = planSpireImages([spire('a'), spire('b', half)], { site: 'kind', context: '--cluster kind', env: { SPIRE_BIN_DIR: good } });
    expect(named.binDirs.get('a')).toBe(good);
    expect(named.problems).toEqual([`variants.b: agent.binDir ${half} has no executable spire-agent`]);
    const none = planSpireImages([spire('a')], { site: 'kind', context: '--cluster kind', env: { PATH: good } });
    expect(none.binDirs.size).toBe(0);
    expect(none.problems).toEqual([]);
  });

  it('elsewhere: the public images; an explicit binDir is refused rather than ignored', () => {
    const p = planSpireImages([spire('a'), spire('b', good)], { site: 'elsewhere', context: 'context prod', env: { SPIRE_BIN_DIR: good } });
    expect(p.binDirs.size).toBe(0);
    expect(p.problems).toEqual([expect.stringMatching(/^variants\.b\.agent\.binDir: .*remove binDir/)]);
  });

  it('names a missing folder', () => {
    expect(spireBinDirProblems(join(dir, 'nope'), 'SPIRE_BIN_DIR')[0]).toMatch(/^SPIRE_BIN_DIR .*nope does not exist/);
  });
});

describe('spireImageRefs', () => {
  it('tags carry the version and the build key, as valid tags', () => {
    expect(spireImageRefs({ version: 'v1.16.0-dev-unk', key: '6db683a55be6' })).toEqual({
      serverImage: 'docker.io/library/attestorm-spire-server:1.16.0-dev-unk-6db683a55be6',
      agentImage: 'docker.io/library/attestorm-spire-agent:1.16.0-dev-unk-6db683a55be6',
    });
    expect(spireImageRefs({ version: '1.2+meta', key: 'abc' }).agentImage).toMatch(/:1\.2_meta-abc$/);
  });
});
