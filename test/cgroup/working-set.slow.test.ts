// The working set on this machine's real memory cgroups: a process in a fresh cgroup writes a
// 64 MiB file (page cache charged to the cgroup) and holds 16 MiB of its own; the cgroup's usage
// counts the file, its working set (usage minus inactive file pages) does not.
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Cgroup, spawnInCgroup } from '../../src/cgroup/index.js';
import type { MemorySample } from '../../src/contract/index.js';
import { cgroupMemorySampler } from '../../src/sample/index.js';
import { PROJECT_ROOT } from '../../src/util/index.js';
import { skipNote } from '../support/skip-note.js';

const V1 = '/sys/fs/cgroup/memory';
const skip = !existsSync(join(V1, 'memory.usage_in_bytes')) || process.getuid?.() !== 0 ? 'needs root and a writable cgroup v1 memory hierarchy' : null;
if (skip) skipNote('working-set.slow.test.ts (page cache in a real memory cgroup)', skip);

const MiB = 2 ** 20;

// Writes the file a MiB at a time (each page written once: the inactive file list), then holds
// 16 MiB of touched anonymous memory until killed.
const CHILD = `
const { openSync, writeSync, closeSync } = require('node:fs');
const fd = openSync(process.argv[1], 'w');
const chunk = Buffer.alloc(1 << 20, 7);
for (let i = 0; i < 64; i++) writeSync(fd, chunk);
closeSync(fd);
globalThis.held = Buffer.alloc(16 << 20, 1);
process.stdout.write('ready\\n');
setInterval(() => {}, 1000);
`;

describe.skipIf(skip !== null)('working set in a real memory cgroup', () => {
  // On disk, not tmpfs: tmpfs pages are shared memory on the anonymous lists, not file cache.
  const dir = mkdtempSync(join(PROJECT_ROOT, '.ws-test-'));
  const cg = skip ? null : Cgroup.create({ version: 'v1', memoryBase: V1, cpuBase: null }, `attestorm-ws-test-${process.pid}`);
  afterAll(async () => {
    await cg?.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  it('counts the written file in usage and leaves it out of the working set', async () => {
    const child = spawnInCgroup(cg, process.execPath, ['-e', CHILD, join(dir, 'written.bin')], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const [first] = (await once(child.stdout!, 'data')) as [Buffer];
      expect(first.toString()).toContain('ready');
      const line = cgroupMemorySampler({ cgroup: cg }).sample(0) as MemorySample;
      const m = cg!.readMemory();
      expect(line.usageBytes).toBeGreaterThanOrEqual(64 * MiB);
      expect(line.workingSetBytes).not.toBeNull();
      // The 64 MiB of page cache is the gap between the two (less whatever the kernel moved to the active list).
      expect(line.usageBytes - line.workingSetBytes!).toBeGreaterThanOrEqual(48 * MiB);
      // What remains is the process itself: node's heap and code plus the 16 MiB it holds.
      expect(line.workingSetBytes!).toBeGreaterThanOrEqual(16 * MiB);
      expect(m.rssBytes!).toBeGreaterThanOrEqual(16 * MiB);
      expect(m.workingSetBytes!).toBeLessThan(m.usageBytes - 48 * MiB);
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  });
});
