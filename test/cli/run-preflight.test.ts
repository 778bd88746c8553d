// `attestorm run` on a machine that lacks what every run needs: a runtime folder on a filesystem
// that cannot hold Unix sockets (a real vfat image, loop-mounted, or through fusefat where the
// kernel has no vfat), and a network namespace whose loopback is down (`unshare --net`). Each is
// refused before anything starts: exit 2, the need named with its code and fix, no run folder.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loopbackFailures, runtimeSocketFailure } from '../../src/sandbox/index.js';
import { PROJECT_ROOT } from '../../src/util/index.js';
import { skipNote } from '../support/skip-note.js';

const isRoot = process.geteuid?.() === 0;
const dir = mkdtempSync(join(tmpdir(), 'attestorm-preflight-'));
const has = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;

/** A vfat image mounted at dir/vfat: by the kernel (mount -o loop), else by fusefat; or why not. */
function mountVfat(): { mountPoint: string; how: string } | { why: string } {
  if (!isRoot) return { why: 'mounting a filesystem image needs root' };
  if (!has('mkfs.vfat')) return { why: 'no mkfs.vfat (apt-get install dosfstools)' };
  const image = join(dir, 'vfat.img');
  const mountPoint = join(dir, 'vfat');
  mkdirSync(mountPoint);
  const mk = spawnSync('sh', ['-c', `truncate -s 8M "${image}" && mkfs.vfat "${image}"`], { encoding: 'utf8' });
  if (mk.status !== 0) return { why: `mkfs.vfat failed: ${mk.stderr.trim()}` };
  const kernel = spawnSync('mount', ['-o', 'loop', image, mountPoint], { encoding: 'utf8' });
  if (kernel.status === 0) return { mountPoint, how: 'vfat, loop-mounted' };
  if (!has('fusefat')) return { why: `mount -o loop failed (${kernel.stderr.trim()}) and there is no fusefat (apt-get install fusefat)` };
  const fuse = spawnSync('fusefat', ['-o', 'rw+', image, mountPoint], { encoding: 'utf8' });
  if (fuse.status === 0) return { mountPoint, how: `vfat through fusefat (the kernel has no vfat: ${kernel.stderr.trim().split('\n')[0]})` };
  return { why: `neither mount -o loop (${kernel.stderr.trim()}) nor fusefat (${fuse.stderr.trim()}) mounted the image` };
}

const vfat = mountVfat();
if ('why' in vfat) skipNote('run-preflight.test.ts: a runtime folder on vfat', vfat.why);
afterAll(() => {
  if ('mountPoint' in vfat) {
    // fusefat may still be busy writing the image right after the last run exits: try for a few seconds.
    let left = true;
    for (let i = 0; i < 25 && left; i++) {
      left = spawnSync('umount', [vfat.mountPoint]).status !== 0 && spawnSync('mountpoint', ['-q', vfat.mountPoint]).status === 0;
      if (left) spawnSync('sleep', ['0.2']);
    }
    // Never remove files through a mount that is still there.
    if (left) throw new Error(`${vfat.mountPoint} is still mounted: umount it by hand`);
  }
  rmSync(dir, { recursive: true, force: true });
});

/** How this user gets a network namespace with loopback down, or null. */
function unshareNet(): string[] | null {
  for (const argv of [
    ['unshare', '--net'],
    ['unshare', '--map-root-user', '--net'],
  ])
    if (spawnSync(argv[0]!, [...argv.slice(1), 'true']).status === 0) return argv;
  return null;
}
const netns = unshareNet();
if (!netns) skipNote('run-preflight.test.ts: loopback down', 'unshare --net is not allowed here (no root, no user namespaces)');

function run(prefix: string[], env: NodeJS.ProcessEnv, out: string) {
  const argv = [...prefix, process.execPath, join(PROJECT_ROOT, 'bin/attestorm.js'), 'run', 'scenarios/quick.yaml', '--out', out];
  const r = spawnSync(argv[0]!, argv.slice(1), { cwd: PROJECT_ROOT, encoding: 'utf8', timeout: 120_000, env: { ...process.env, ...env } });
  return { code: r.status, stderr: r.stderr };
}

describe('preflight: a runtime folder that cannot hold sockets', () => {
  it('a folder on a filesystem that holds sockets passes the probe and keeps nothing of it', async () => {
    const base = join(dir, 'local');
    mkdirSync(base, { mode: 0o700 });
    expect(await runtimeSocketFailure(base)).toBeNull();
    expect(readdirSync(base)).toEqual([]);
  });

  it.skipIf('why' in vfat)(
    'attestorm run with ATTESTORM_TMPDIR on vfat is refused before anything starts: exit 2, the filesystem and the variable named',
    async () => {
      const base = join((vfat as { mountPoint: string }).mountPoint, 'base');
      mkdirSync(base, { mode: 0o700 });
      const failure = await runtimeSocketFailure(base);
      expect(failure?.code).toBe('ATTESTORM_ERR_RUNTIME_DIR_SOCKETS');
      expect(failure?.message).toMatch(/ a (vfat|fuse\.fusefat) filesystem \(/);
      expect(failure?.fix).toContain('ATTESTORM_TMPDIR=');
      const out = join(dir, 'out-vfat');
      const r = run([], { ATTESTORM_TMPDIR: base }, out);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`the runtime folder ${base} cannot hold the agents' Unix sockets`);
      expect(r.stderr).toContain('[ATTESTORM_ERR_RUNTIME_DIR_SOCKETS]');
      expect(r.stderr).toContain('nothing was started');
      expect(r.stderr).not.toMatch(/agent ready|pods started/i);
      expect(existsSync(out)).toBe(false);
      expect(readdirSync(base)).toEqual([]);
    },
  );
});

describe('preflight: loopback', () => {
  it('on this machine loopback, the kubelet emulator (http, https with a token) and the metrics address answer', async () => {
    expect(await loopbackFailures({ kubelets: [{ tls: false }, { tls: true, token: 'sekret' }], metrics: true })).toEqual([]);
  });

  it.skipIf(!netns)(
    'attestorm run scenarios/quick.yaml in a network namespace whose loopback is down is refused before anything starts, naming loopback',
    () => {
      const out = join(dir, 'out-lo');
      const r = run(netns!, {}, out);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain('loopback is down: no interface of this network namespace has 127.0.0.1');
      expect(r.stderr).toContain('connect ENETUNREACH');
      expect(r.stderr).toContain('fix: ip link set lo up');
      expect(r.stderr).toContain('[ATTESTORM_ERR_LOOPBACK]');
      expect(r.stderr).not.toMatch(/agent ready|pods started|verdict/i);
      expect(existsSync(out)).toBe(false);
    },
  );
});
