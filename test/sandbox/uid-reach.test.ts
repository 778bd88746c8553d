// Whether pods of another uid can reach a file: real folders with real modes, checked by stat alone
// (no process has to change uid), so it runs as any user.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { podUidProblem } from '../../src/sandbox/index.js';
import { unreachableFor } from '../../src/sandbox/uid-reach.js';

const root = mkdtempSync(join(tmpdir(), 'attestorm-uidreach-'));
chmodSync(root, 0o755);
afterAll(() => rmSync(root, { recursive: true, force: true }));
const other = { uid: 30000, gid: 30000 };

function tree(mode: number, fileMode = 0o644): { dir: string; file: string } {
  const dir = mkdtempSync(join(root, 'd-'));
  const file = join(dir, 'sub', 'bundle.cjs');
  mkdirSync(join(dir, 'sub'));
  writeFileSync(file, '');
  chmodSync(file, fileMode);
  chmodSync(dir, mode);
  return { dir, file };
}

describe('unreachableFor', () => {
  it('a file below a 0700 folder is closed to another uid, and the message names the folder, its mode and owner', () => {
    const { dir, file } = tree(0o700);
    const own = process.getuid?.() ?? 0;
    expect(unreachableFor(file, other)).toBe(`${dir} is mode 0700 (owner uid ${own}, gid ${process.getgid?.() ?? 0})`);
    expect(unreachableFor(file, { uid: own === 0 ? 0 : own, gid: process.getgid?.() ?? 0 })).toBeNull();
  });

  it('searchable folders and a world-readable file reach; a file without read for others does not; exec needs x', () => {
    const open = tree(0o711);
    expect(unreachableFor(open.file, other)).toBeNull();
    expect(unreachableFor(open.file, other, 'exec')).toMatch(/bundle\.cjs is mode 0644/);
    const closed = tree(0o755, 0o600);
    expect(unreachableFor(closed.file, other)).toMatch(/bundle\.cjs is mode 0600/);
    expect(unreachableFor(join(open.dir, 'none'), other)).toBe(`${join(open.dir, 'none')} does not exist`);
  });

  it('group bits apply to the file group, owner bits to the owner', () => {
    const { file } = tree(0o755, 0o640);
    expect(unreachableFor(file, { uid: 30001, gid: process.getgid?.() ?? 0 })).toBeNull();
    expect(unreachableFor(file, other)).not.toBeNull();
  });

  it('root reaches everything', () => {
    expect(unreachableFor(tree(0o700).file, { uid: 0, gid: 0 })).toBeNull();
  });
});

describe('podUidProblem', () => {
  // node itself is checked first; on a machine whose node lies below a closed folder (a version
  // manager under /root) that is the problem named, whatever the temp folder.
  const nodeBlocked = unreachableFor(process.execPath, other, 'exec');

  it('nothing to check when every pod runs as this process', () => {
    expect(podUidProblem({ uidMode: 'same', bystandersUid: 'same' }, join(root, 'none'))).toBeNull();
  });

  it.skipIf(nodeBlocked !== null)(
    'names the setting, the uid, the folder and its mode when the temp folder is closed; a folder not made yet is judged by its parent',
    () => {
      const { dir } = tree(0o700);
      const p = podUidProblem({ uidMode: 'same', bystandersUid: 'own' }, join(dir, 'attestorm', 'run-1'));
      expect(p).toContain('bystanders.uid "own": pod processes run as uid 30000, which cannot reach the run\'s temp folder');
      expect(p).toContain(`${dir} is mode 0700`);
      expect(p).toContain('set ATTESTORM_TMPDIR to a folder of yours below folders every user can enter');
      expect(podUidProblem({ uidMode: 'per-pod' }, join(dir, 'x'))).toContain('uidMode "per-pod": pod processes run as uid 20000');
      expect(podUidProblem({ uidMode: 'per-pod' }, join(root, 'not-yet'))).toBeNull();
    },
  );

  it.skipIf(nodeBlocked === null)('names node when pods of another uid cannot start it', () => {
    expect(podUidProblem({ uidMode: 'per-pod' }, root)).toContain(`cannot start node (${process.execPath}): ${nodeBlocked}`);
  });
});
