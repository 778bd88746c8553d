// Handing a root run's files back to the user: the sudo caller or the folder's owner; lchown only,
// so a symlink in the tree is handed over itself and what it points at keeps its owner.
import { chownSync, lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { firstMissing, handBackOwner, handBackTree } from '../../src/util/index.js';
import { skipNote } from '../support/skip-note.js';

const isRoot = process.geteuid?.() === 0;
if (!isRoot) skipNote('hand-back.test.ts: chown to another uid', 'needs root');
if (isRoot) skipNote('hand-back.test.ts: nothing handed back by a user who is not root', 'runs as root');

const root = mkdtempSync(join(tmpdir(), 'attestorm-handback-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('hand back', () => {
  it('firstMissing names the topmost folder a write would create', () => {
    expect(firstMissing(join(root, 'a', 'b', 'c'))).toBe(join(root, 'a'));
    expect(firstMissing(root)).toBeNull();
  });

  it.skipIf(isRoot)('hands nothing back when not root', () => {
    expect(handBackOwner(root, { SUDO_UID: '65534', SUDO_GID: '65534' })).toBeNull();
  });

  it.skipIf(!isRoot)('as root: the sudo caller, else the owner of the nearest existing folder, else nobody', () => {
    expect(handBackOwner(join(root, 'x'), { SUDO_UID: '65534', SUDO_GID: '65533' })).toEqual({ uid: 65534, gid: 65533 });
    expect(handBackOwner(join(root, 'x'), { SUDO_UID: '0', SUDO_GID: '0' })).toBeNull();
    expect(handBackOwner(join(root, 'x'), {})).toBeNull();
    const theirs = join(root, 'theirs');
    mkdirSync(theirs);
    chownSync(theirs, 65534, 65534);
    expect(handBackOwner(join(theirs, 'out', 'run'), {})).toEqual({ uid: 65534, gid: 65534 });
  });

  it.skipIf(!isRoot)("hands root's files back without following symlinks; other uids' files and the link's target keep their owners", () => {
    const outside = join(root, 'outside');
    writeFileSync(outside, 'root owned');
    const tree = join(root, 'tree');
    mkdirSync(join(tree, 'sub'), { recursive: true });
    writeFileSync(join(tree, 'sub', 'results.json'), '{}');
    writeFileSync(join(tree, 'pod.log'), '');
    chownSync(join(tree, 'pod.log'), 20000, 20000);
    symlinkSync(outside, join(tree, 'link'));
    symlinkSync(root, join(tree, 'dir-link'));
    handBackTree(tree, { uid: 65534, gid: 65534 });
    for (const p of [tree, join(tree, 'sub'), join(tree, 'sub', 'results.json'), join(tree, 'link'), join(tree, 'dir-link')])
      expect(lstatSync(p).uid, p).toBe(65534);
    expect(lstatSync(join(tree, 'pod.log')).uid).toBe(20000);
    expect(lstatSync(outside).uid).toBe(0);
    expect(lstatSync(root).uid).toBe(0);
  });
});
