// The runtime base and run folders on a shared machine: a base another user controls, or that others
// may write, is refused naming path, owner and mode; a symlink where a run folder or run file goes is
// refused with nothing made through it; cleanup deletes only what it can prove is its own.
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UnsafePathError } from '../../src/errors.js';
import { cleanupLeftovers, createRunFolder, ensureRunFolder, ensureRuntimeBase, newRunId, runtimeBase, RUNTIME_DIR_ENV } from '../../src/sandbox/index.js';
import { RunTempFolder } from '../../src/sandbox/run-temp.js';
import { skipNote } from '../support/skip-note.js';

const isRoot = process.geteuid?.() === 0;
if (!isRoot) skipNote('runtime-dir.test.ts: a base owned by another user', 'chown to another uid needs root');

const root = mkdtempSync(join(tmpdir(), 'attestorm-rtdir-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = () => {
  const d = join(root, `t${n++}`);
  mkdirSync(d, { mode: 0o700 });
  return d;
};
const mode = (p: string) => lstatSync(p).mode & 0o7777;
const unsafe = (fn: () => unknown): UnsafePathError => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(UnsafePathError);
    expect((err as UnsafePathError).code).toBe('ATTESTORM_ERR_UNSAFE_PATH');
    return err as UnsafePathError;
  }
  throw new Error('expected an UnsafePathError');
};
/** A dead owner's PID: a process that has exited. */
const deadPid = () => spawnSync('true').pid!;

describe('runtimeBase', () => {
  it(`is ${RUNTIME_DIR_ENV} when set, else /run/attestorm for root, else $XDG_RUNTIME_DIR/attestorm or $TMPDIR/attestorm-<uid>`, () => {
    expect(runtimeBase({ [RUNTIME_DIR_ENV]: '/x/y' })).toBe('/x/y');
    if (isRoot) expect(runtimeBase({ XDG_RUNTIME_DIR: '/run/user/0' })).toBe('/run/attestorm');
    else {
      expect(runtimeBase({ XDG_RUNTIME_DIR: '/run/user/7' })).toBe('/run/user/7/attestorm');
      expect(runtimeBase({})).toBe(join(tmpdir(), `attestorm-${process.geteuid!()}`));
    }
  });
});

describe('ensureRuntimeBase', () => {
  it('makes a missing base 0711 (others traverse, never list or write) whatever the umask', () => {
    const base = join(fresh(), 'attestorm');
    const old = process.umask(0o077);
    try {
      expect(ensureRuntimeBase(base)).toBe(base);
    } finally {
      process.umask(old);
    }
    expect(mode(base)).toBe(0o711);
    expect(ensureRuntimeBase(base)).toBe(base);
  });

  it('refuses a base others may write, naming the path, its owner and its mode, and writes nothing in it', () => {
    const base = join(fresh(), 'attestorm');
    mkdirSync(base);
    chmodSync(base, 0o777);
    const err = unsafe(() => ensureRuntimeBase(base));
    expect(err.message).toContain(`${base} is owned by uid ${process.geteuid!()} with mode 0777`);
    expect(readdirSync(base)).toEqual([]);
    // The sticky bit keeps others from renaming or removing what is ours: allowed, as /tmp is.
    chmodSync(base, 0o1777);
    expect(ensureRuntimeBase(base)).toBe(base);
  });

  it('refuses a base that is a symlink, even to a folder of ours', () => {
    const d = fresh();
    mkdirSync(join(d, 'real'));
    symlinkSync(join(d, 'real'), join(d, 'attestorm'));
    expect(unsafe(() => ensureRuntimeBase(join(d, 'attestorm'))).message).toContain('is a symlink');
  });

  it('refuses a base below a folder others may write (no sticky bit): they could swap the base', () => {
    const open = fresh();
    chmodSync(open, 0o777);
    const base = join(open, 'attestorm');
    expect(unsafe(() => ensureRuntimeBase(base)).message).toContain(`${open} is owned by uid ${process.geteuid!()} with mode 0777`);
    expect(existsSync(base)).toBe(false);
  });

  it.skipIf(!isRoot)('refuses a base another user owns (nobody, 0777, as a pre-created /tmp/attestorm)', () => {
    const base = join(fresh(), 'attestorm');
    mkdirSync(base);
    chownSync(base, 65534, 65534);
    chmodSync(base, 0o777);
    const err = unsafe(() => ensureRuntimeBase(base));
    expect(err.message).toContain(`${base} is owned by uid 65534 with mode 0777: it must belong to uid 0`);
    chmodSync(base, 0o700);
    expect(unsafe(() => ensureRuntimeBase(base)).message).toContain('owned by uid 65534 with mode 0700');
    expect(readdirSync(base)).toEqual([]);
  });
});

describe('run folders', () => {
  it('are made new: 0700, or 0711 when pods of another uid reach files in them by name', () => {
    const base = join(fresh(), 'attestorm');
    expect(mode(createRunFolder(join(base, 'r-1-00000000'), false))).toBe(0o700);
    expect(mode(createRunFolder(join(base, 'r-2-00000000'), true))).toBe(0o711);
    expect(mode(base)).toBe(0o711);
  });

  it('refuses a symlink swapped in for the run folder, and makes nothing through it', () => {
    const d = fresh();
    const base = ensureRuntimeBase(join(d, 'attestorm'));
    const elsewhere = join(d, 'elsewhere');
    mkdirSync(elsewhere);
    const dir = join(base, newRunId('swap'));
    symlinkSync(elsewhere, dir);
    expect(unsafe(() => createRunFolder(dir, false)).message).toMatch(/already exists as a symlink/);
    expect(unsafe(() => ensureRunFolder(dir, false)).message).toMatch(/is a symlink/);
    const temp = new RunTempFolder('x', dir);
    expect(() => temp.create()).toThrow(UnsafePathError);
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  it('never writes a run file through a symlink planted in its place', () => {
    const d = fresh();
    const outside = join(d, 'outside');
    writeFileSync(outside, 'precious');
    const runId = newRunId('plant');
    const base = join(d, 'attestorm');
    const temp = new RunTempFolder(runId, join(base, runId));
    temp.create();
    symlinkSync(outside, join(temp.dir, 'kubelet-token'));
    expect(() => temp.write('kubelet-token', 'secret')).toThrow(/EEXIST/);
    expect(readFileSync(outside, 'utf8')).toBe('precious');
  });
});

describe('cleanup in the runtime base', () => {
  it("removes a dead run's folder but follows no symlink: files outside stay, links named like runs stay", async () => {
    const d = fresh();
    const base = ensureRuntimeBase(join(d, 'attestorm'));
    const outsideDir = join(d, 'outside');
    mkdirSync(outsideDir);
    const outsideFile = join(outsideDir, 'precious');
    writeFileSync(outsideFile, 'keep me');
    // A dead run's real folder, with a symlink inside pointing out.
    const dead = join(base, newRunId('dead', deadPid()));
    createRunFolder(dead, false);
    symlinkSync(outsideFile, join(dead, 'link-to-outside'));
    symlinkSync(outsideDir, join(dead, 'dir-link'));
    // A symlink named like a dead run, pointing at a folder outside.
    const fake = join(base, newRunId('fake', deadPid()));
    symlinkSync(outsideDir, fake);
    // A folder not named like a run: not provably ours.
    mkdirSync(join(base, 'notes'));

    const removed = await cleanupLeftovers({ tempDir: base });
    expect(removed).toContain(dead);
    expect(removed).not.toContain(fake);
    expect(existsSync(dead)).toBe(false);
    expect(lstatSync(fake).isSymbolicLink()).toBe(true);
    expect(existsSync(join(base, 'notes'))).toBe(true);
    expect(readFileSync(outsideFile, 'utf8')).toBe('keep me');
    expect(readdirSync(outsideDir)).toEqual(['precious']);
  });

  it.skipIf(!isRoot)('leaves a dead-looking run folder another user owns, and refuses a base others may write', async () => {
    const d = fresh();
    const base = ensureRuntimeBase(join(d, 'attestorm'));
    const theirs = join(base, newRunId('theirs', deadPid()));
    mkdirSync(theirs);
    chownSync(theirs, 65534, 65534);
    expect(await cleanupLeftovers({ tempDir: base })).not.toContain(theirs);
    expect(existsSync(theirs)).toBe(true);
    chmodSync(base, 0o777);
    await expect(cleanupLeftovers({ tempDir: base })).rejects.toThrow(UnsafePathError);
    expect(statSync(theirs).uid).toBe(65534);
  });
});
