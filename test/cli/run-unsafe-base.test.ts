// `attestorm run` with a runtime base another user controls (a pre-created /tmp/attestorm, owner
// nobody, mode 0777) or that others may write: refused before anything starts, exit 3, nothing written.
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/util/index.js';
import { skipNote } from '../support/skip-note.js';

const isRoot = process.geteuid?.() === 0;
if (!isRoot) skipNote('run-unsafe-base.test.ts: a base owned by nobody', 'chown to another uid needs root');

const dir = mkdtempSync(join(tmpdir(), 'attestorm-unsafe-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(base: string, out: string) {
  const r = spawnSync(process.execPath, [join(PROJECT_ROOT, 'bin/attestorm.js'), 'run', 'scenarios/quick.yaml', '--out', out], {
    cwd: PROJECT_ROOT,
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, ATTESTORM_TMPDIR: base },
  });
  return { code: r.status, stderr: r.stderr };
}

describe('attestorm run: an unsafe runtime base', () => {
  it.skipIf(!isRoot)('a base owned by nobody with mode 0777 is refused before anything starts: exit 3, path, owner and mode named, nothing written', () => {
    const base = join(dir, 'hostile');
    mkdirSync(base);
    chownSync(base, 65534, 65534);
    chmodSync(base, 0o777);
    const out = join(dir, 'out-hostile');
    const r = run(base, out);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain(`the runtime folder ${base} is owned by uid 65534 with mode 0777`);
    expect(r.stderr).toContain('ATTESTORM_ERR_UNSAFE_PATH');
    expect(r.stderr).not.toMatch(/starting|pods started|agent ready/i);
    expect(readdirSync(base)).toEqual([]);
    expect(existsSync(out)).toBe(false);
  });

  it('a base of ours that others may write (0777, no sticky bit) is refused the same way', () => {
    const base = join(dir, 'open');
    mkdirSync(base);
    chmodSync(base, 0o777);
    const out = join(dir, 'out-open');
    const r = run(base, out);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain(`the runtime folder ${base} is owned by uid ${process.geteuid!()} with mode 0777`);
    expect(readdirSync(base)).toEqual([]);
    expect(existsSync(out)).toBe(false);
  });
});
