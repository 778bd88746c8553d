// A kind node's agent cgroup read from the host on real cgroup v1 cgroups of this machine: a "node
// container" cgroup holding a process, the kubelet's systemd-driver slices below it, and a real
// kernel OOM kill in the container scope, seen as oom_kill rising. Slow project: the OOM kill
// allocates until the kernel kills it.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectCgroupHost } from '../../src/cgroup/index.js';
import { containerScopeName, KindAgentCgroup, nodeCgroupRoot, podSliceCandidates } from '../../src/kind/index.js';
import { skipNote } from '../support/skip-note.js';

const POD_UID = '0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b';
const CID = 'a'.repeat(64);

const { host, reason } = detectCgroupHost();
const v1 = host?.version === 'v1' ? host : null;
if (!v1) skipNote('kind cgroup tests on real v1 cgroups', reason || 'not a v1 memory hierarchy');

describe.skipIf(!v1)(`cgroup v1, real cgroups${v1 ? '' : ` (skipped: ${reason || 'not a v1 memory hierarchy'})`}`, () => {
  const created: string[] = [];
  afterAll(() => {
    for (const d of created.reverse()) {
      try {
        rmdirSync(d);
      } catch {
        // still has a process for a moment; the next cleanup takes it
      }
    }
  });

  it('finds the node cgroup from a process in it, reads the agent scope, and sees a real OOM kill rise oom_kill', async () => {
    const nodeDir = join(v1!.memoryBase, `attestorm-kindtest-${process.pid}`);
    const slice = join(nodeDir, podSliceCandidates(POD_UID)[1]!);
    const scope = join(slice, containerScopeName(`containerd://${CID}`));
    let d = nodeDir;
    created.push(d);
    mkdirSync(d);
    for (const part of [...podSliceCandidates(POD_UID)[1]!.split('/'), containerScopeName(`containerd://${CID}`)]) {
      d = join(d, part);
      mkdirSync(d);
      created.push(d);
    }
    // The "node container's init": a process in the node cgroup.
    const init = spawn('sleep', ['30'], { stdio: 'ignore' });
    writeFileSync(join(nodeDir, 'cgroup.procs'), String(init.pid));
    try {
      const root = nodeCgroupRoot(init.pid!);
      expect(root).toEqual({ version: 'v1', dir: nodeDir });
      const cg = new KindAgentCgroup(root, POD_UID);
      expect(cg.podSlice()).toBe(slice);
      expect(cg.setContainer(`containerd://${CID}`)).toBe(scope);
      writeFileSync(join(scope, 'memory.limit_in_bytes'), String(32 * 2 ** 20));
      try {
        writeFileSync(join(scope, 'memory.memsw.limit_in_bytes'), String(32 * 2 ** 20));
      } catch {
        // no swap accounting: the limit alone, swap is off on this machine
      }
      expect(cg.readContainer()).toMatchObject({ limitBytes: 32 * 2 ** 20, oomKills: 0 });
      expect(cg.oomKillRose()).toBe(false);
      // The "agent": a process in the container scope that allocates past the limit.
      const hog = spawnSync('sh', ['-c', `echo $$ > ${scope}/cgroup.procs && exec node -e "const a=[]; for(;;) a.push(Buffer.alloc(1<<20, 1))"`], {
        timeout: 30_000,
      });
      expect(hog.signal).toBe('SIGKILL');
      const after = cg.readContainer()!;
      expect(after.oomKills).toBeGreaterThanOrEqual(1);
      expect(after.peakBytes).toBeGreaterThan(16 * 2 ** 20);
      expect(cg.oomKillRose()).toBe(true);
      expect(readFileSync(join(scope, 'cgroup.procs'), 'utf8').trim()).toBe('');
    } finally {
      init.kill('SIGKILL');
      await new Promise((r) => init.once('exit', r));
    }
    expect(existsSync(scope)).toBe(true);
  }, 60_000);
});
