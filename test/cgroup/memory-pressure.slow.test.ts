// Memory pressure short of a kill on this machine's real memory cgroups (v1), read by the real
// sampler: a process holding 48 MiB writes a file through a limit 1.5× its working set (page cache
// meets the limit, yet the working set stays clear of it; memory.failcnt counts the hits unless
// memory+swap is limited too, as the runner limits it where swap is accounted); then,
// quiet, its limit is lowered to just above its working set, and the time near the limit makes it
// "at its limit". The kernel kills nothing.
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Cgroup, spawnInCgroup } from '../../src/cgroup/index.js';
import type { MemorySample } from '../../src/contract/index.js';
import { cgroupMemorySampler } from '../../src/sample/index.js';
import { heldAtLimit, memoryPressure } from '../../src/scenario/memory-pressure.js';
import { PROJECT_ROOT } from '../../src/util/index.js';
import { skipNote } from '../support/skip-note.js';

const V1 = '/sys/fs/cgroup/memory';
const skip = !existsSync(join(V1, 'memory.usage_in_bytes')) || process.getuid?.() !== 0 ? 'needs root and a writable cgroup v1 memory hierarchy' : null;
if (skip) skipNote('memory-pressure.slow.test.ts (a process held at its memory limit)', skip);

// Holds 48 MiB; on "write" writes a 256 MiB file round and round, a MiB at a time, each synced (cgroup v1
// cannot throttle a cgroup's dirty pages; synced, they are clean cache reclaimed at the limit);
// on "stop" goes quiet.
const CHILD = `
const { openSync, writeSync, fdatasyncSync, closeSync } = require('node:fs');
globalThis.held = Buffer.alloc(48 << 20, 1);
let fd = null;
let at = 0;
const chunk = Buffer.alloc(1 << 20, 7);
const write = () => {
  if (fd === null) return;
  for (let i = 0; i < 8; i++) {
    writeSync(fd, chunk, 0, chunk.length, at);
    fdatasyncSync(fd);
    at = (at + chunk.length) % (256 << 20);
  }
  setImmediate(write);
};
process.stdin.on('data', (d) => {
  if (String(d).includes('write')) { fd = openSync(process.argv[1], 'w'); write(); }
  if (String(d).includes('stop')) { closeSync(fd); fd = null; process.stdout.write('stopped\\n'); }
});
process.stdout.write('ready\\n');
setInterval(() => {}, 1000);
`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(skip !== null)('memory pressure in a real memory cgroup', () => {
  // On disk, not tmpfs: tmpfs pages are shared memory, not reclaimable file cache.
  const dir = mkdtempSync(join(PROJECT_ROOT, '.pressure-test-'));
  const cg = skip ? null : Cgroup.create({ version: 'v1', memoryBase: V1, cpuBase: null }, `attestorm-pressure-test-${process.pid}`);
  afterAll(async () => {
    await cg?.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The real sampler's readings every 100 ms for `ms`. */
  async function readings(ms: number): Promise<MemorySample[]> {
    const sampler = cgroupMemorySampler({ cgroup: cg });
    const lines: MemorySample[] = [];
    const start = Date.now();
    while (Date.now() - start < ms) {
      lines.push(sampler.sample(Date.now() - start) as MemorySample);
      await sleep(100);
    }
    return lines;
  }

  it('page cache at the limit is not near it; the working set held there is at its limit; limit hits as v1 counts them; no OOM kill', async () => {
    const child = spawnInCgroup(cg, process.execPath, ['-e', CHILD, join(dir, 'written.bin')], { stdio: ['pipe', 'pipe', 'inherit'] });
    const said = (word: string) =>
      new Promise<void>((resolve) => {
        const on = (d: Buffer) => {
          if (!String(d).includes(word)) return;
          child.stdout!.off('data', on);
          resolve();
        };
        child.stdout!.on('data', on);
      });
    try {
      await said('ready');
      await sleep(300);
      const held = cg!.readMemory().workingSetBytes!;
      cg!.setMemoryLimit(Math.ceil((1.5 * held) / 4096) * 4096);
      child.stdin!.write('write\n');
      const cache = await readings(2500);
      const cached = memoryPressure(cache, 500, 2500, 1)!;
      expect(Math.max(...cache.map((l) => l.usageBytes))).toBeGreaterThan(0.98 * cache[0]!.limitBytes);
      // The runner's limit covers memory+swap where swap is accounted, and then v1 counts no hit.
      const memsw = readFileSync(join(cg!.path, 'memory.memsw.limit_in_bytes'), 'utf8').trim();
      if (existsSync(join(cg!.path, 'memory.memsw.limit_in_bytes')) && Number(memsw) < 2 ** 62) expect(cached.limitHits).toBeNull();
      else expect(cached.limitHits).toBeGreaterThan(0);
      expect(cached.nearLimitSeconds).toBe(0);
      expect(heldAtLimit(cached)).toBe(false);

      child.stdin!.write('stop\n');
      await said('stopped');
      await sleep(300);
      const quiet = cg!.readMemory().workingSetBytes!;
      cg!.setMemoryLimit(Math.ceil(quiet / 0.965 / 4096) * 4096);
      const near = await readings(2000);
      const p = memoryPressure(near, 0, 2000, 1)!;
      expect(cg!.readMemory().oomKills).toBe(0);
      expect(p.nearLimitSeconds).toBeGreaterThan(1.5);
      expect(p.stallSome).toBeNull();
      expect(heldAtLimit(p)).toBe(true);
      console.log(`page cache at the limit: ${JSON.stringify(cached)}; the working set held there: ${JSON.stringify(p)}`);
    } finally {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await once(child, 'exit');
      }
    }
  });
});
