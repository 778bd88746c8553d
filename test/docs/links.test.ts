// Links between the project's Markdown files (relative paths and #anchors) resolve: the
// `docs:links` script (remark-validate-links, no network) passes here and fails on a broken link.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/util/index.js';

const script = (JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts['docs:links']!;
const dir = mkdtempSync(join(tmpdir(), 'attestorm-links-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The script's own command line, on `target` instead of the whole checkout. */
function check(target: string) {
  const [bin, ...args] = script.split(' ');
  const r = spawnSync(join(PROJECT_ROOT, 'node_modules', '.bin', bin!), [...args.map((a) => (a === '.' ? target : a)), '--no-color'], {
    cwd: PROJECT_ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('Markdown links', () => {
  it('every relative link and anchor in the checkout resolves', () => {
    const r = check('.');
    expect(r.out).toBe('');
    expect(r.code).toBe(0);
  });

  it('a missing file, a missing heading and a missing heading in another file fail the check, each named', () => {
    writeFileSync(join(dir, 'other.md'), '# Real heading\n');
    writeFileSync(join(dir, 'index.md'), '# Index\n\n[ok](other.md#real-heading) [gone](missing.md) [no anchor](#nowhere) [elsewhere](other.md#not-there)\n');
    const r = check(dir);
    expect(r.code).not.toBe(0);
    expect(r.out).toContain('Cannot find file `missing.md`');
    expect(r.out).toContain('Cannot find heading for `#nowhere`');
    expect(r.out).toContain('Cannot find heading for `#not-there` in `other.md`');
    expect(r.out).not.toContain('real-heading');
  });
});
