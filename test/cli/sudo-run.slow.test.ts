// `sudo attestorm run` into a user's checkout: the run folder, its reports and the JUnit file end
// up the user's (SUDO_UID/SUDO_GID), not root's; the runtime files stay in root's private base.
import { spawnSync } from 'node:child_process';
import { chownSync, lstatSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectCgroupHost } from '../../src/cgroup/index.js';
import { PROJECT_ROOT } from '../../src/util/index.js';
import { skipNote } from '../support/skip-note.js';

const isRoot = process.geteuid?.() === 0;
const { host, reason } = detectCgroupHost();
const skipReason = !isRoot ? 'a sudo-style run needs root' : !host ? reason : null;
if (skipReason) skipNote('sudo-run.slow.test.ts (files handed back to the sudo caller)', skipReason);

const checkout = mkdtempSync(join(tmpdir(), 'attestorm-sudo-'));
afterAll(() => rmSync(checkout, { recursive: true, force: true }));

/** Every path at or below dir (symlinks not followed) whose owner is uid. */
function ownedBy(dir: string, uid: number): string[] {
  const st = lstatSync(dir);
  const out = st.uid === uid ? [dir] : [];
  if (st.isDirectory()) for (const name of readdirSync(dir)) out.push(...ownedBy(join(dir, name), uid));
  return out;
}

describe.skipIf(skipReason !== null)('a run through sudo', () => {
  it("leaves no root-owned file in the caller's checkout", () => {
    // The caller's checkout is theirs, as under sudo.
    chownSync(checkout, 65534, 65534);
    const out = join(checkout, 'reports', 'quick');
    const r = spawnSync(
      process.execPath,
      [
        join(PROJECT_ROOT, 'bin/attestorm.js'),
        'run',
        'scenarios/quick.yaml',
        '--variants',
        'pre-attestation',
        '--duration',
        '2s',
        '--out',
        out,
        '--junit',
        join(checkout, 'junit.xml'),
      ],
      { cwd: PROJECT_ROOT, encoding: 'utf8', timeout: 240_000, env: { ...process.env, SUDO_UID: '65534', SUDO_GID: '65534' } },
    );
    expect(r.status, r.stderr.slice(-2000)).toBe(0);
    expect(readdirSync(out)).toEqual(expect.arrayContaining(['results.json', 'report.html', 'pre-attestation.r1']));
    expect(readdirSync(checkout).sort()).toEqual(['junit.xml', 'reports']);
    expect(ownedBy(checkout, 0)).toEqual([]);
    expect(lstatSync(join(out, 'results.json')).gid).toBe(65534);
  });
});
