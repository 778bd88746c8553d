// Finding spire-server and spire-agent without SPIRE installed: real files in a temp folder, the
// order binDir → $SPIRE_BIN_DIR → PATH, and errors that name the path and where it was looked for.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PlatformError } from '../../src/errors.js';
import { findSpireBinaries, spireVersion } from '../../src/spire/index.js';

const root = mkdtempSync(join(tmpdir(), 'attestorm-spirebin-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function binDir(name: string, files: Record<string, number>): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  for (const [file, mode] of Object.entries(files)) {
    // A script that prints a version on stderr, as SPIRE's binaries do.
    writeFileSync(join(dir, file), `#!/bin/sh\necho "9.9.9-test-${file}" >&2\n`);
    chmodSync(join(dir, file), mode);
  }
  return dir;
}

describe('findSpireBinaries', () => {
  const good = binDir('good', { 'spire-server': 0o755, 'spire-agent': 0o755 });
  const other = binDir('other', { 'spire-server': 0o755, 'spire-agent': 0o755 });
  const noAgent = binDir('no-agent', { 'spire-server': 0o755 });
  const notExec = binDir('not-exec', { 'spire-server': 0o755, 'spire-agent': 0o644 });

  it('takes binDir first, then $SPIRE_BIN_DIR, then PATH', () => {
    expect(findSpireBinaries({ binDir: good, env: { SPIRE_BIN_DIR: other, PATH: other } })).toEqual({
      server: join(good, 'spire-server'),
      agent: join(good, 'spire-agent'),
      source: 'binDir',
    });
    expect(findSpireBinaries({ env: { SPIRE_BIN_DIR: other, PATH: good } })).toMatchObject({ server: join(other, 'spire-server'), source: 'SPIRE_BIN_DIR' });
    expect(findSpireBinaries({ env: { PATH: `${noAgent}:${good}` } })).toEqual({
      server: join(noAgent, 'spire-server'),
      agent: join(good, 'spire-agent'),
      source: 'PATH',
    });
  });

  it('names the missing binary, the path tried and where it looked', () => {
    const err = (() => {
      try {
        findSpireBinaries({ binDir: noAgent, env: { SPIRE_BIN_DIR: good } });
      } catch (e) {
        return e as PlatformError;
      }
      throw new Error('no error');
    })();
    expect(err).toBeInstanceOf(PlatformError);
    expect(err.code).toBe('ATTESTORM_ERR_PLATFORM');
    expect(err.message).toContain(`spire-agent not found: looked in binDir ${noAgent}`);
    expect(err.message).toContain(join(noAgent, 'spire-agent'));
    expect(err.message).toContain('SPIRE_BIN_DIR');
    expect(() => findSpireBinaries({ env: { SPIRE_BIN_DIR: join(root, 'nowhere') } })).toThrow(/spire-server not found: looked in \$SPIRE_BIN_DIR .*nowhere/);
    expect(() => findSpireBinaries({ env: { PATH: noAgent } })).toThrow(/spire-agent not found: looked in PATH \(no binDir given, SPIRE_BIN_DIR unset\)/);
    expect(() => findSpireBinaries({ env: {} })).toThrow(/looked in PATH .*\(no folders\)/);
  });

  it('says a binary that is there but not executable is not executable, with its mode', () => {
    expect(() => findSpireBinaries({ binDir: notExec })).toThrow(new RegExp(`spire-agent: ${join(notExec, 'spire-agent')} is not executable \\(mode 0644\\)`));
    expect(() => findSpireBinaries({ binDir: root })).toThrow(/spire-server not found/);
    mkdirSync(join(root, 'dir-bin', 'spire-server'), { recursive: true });
    expect(() => findSpireBinaries({ binDir: join(root, 'dir-bin') })).toThrow(/is not a regular file/);
  });

  it('reads the version a binary prints', async () => {
    expect(await spireVersion(join(good, 'spire-agent'))).toBe('9.9.9-test-spire-agent');
    await expect(spireVersion(join(root, 'nowhere', 'spire-agent'))).rejects.toThrow(/--version failed/);
  });
});
