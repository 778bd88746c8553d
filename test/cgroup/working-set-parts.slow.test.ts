// The working set's kernel part on this machine's real memory cgroups: a process in a fresh cgroup
// accepts 256 Unix-socket connections from itself and never reads them, so every connection's send
// buffer fills in the kernel. Its RSS barely moves; the cgroup's kernel memory (socket buffers,
// struct sock, files) and working set grow by the buffers, as an agent's do under a storm of
// connections.
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { Cgroup, spawnInCgroup } from '../../src/cgroup/index.js';
import type { MemorySample } from '../../src/contract/index.js';
import { cgroupMemorySampler } from '../../src/sample/index.js';
import { skipNote } from '../support/skip-note.js';

const V1 = '/sys/fs/cgroup/memory';
const skip = !existsSync(join(V1, 'memory.usage_in_bytes')) || process.getuid?.() !== 0 ? 'needs root and a writable cgroup v1 memory hierarchy' : null;
if (skip) skipNote('working-set-parts.slow.test.ts (socket buffers in a real memory cgroup)', skip);

const MiB = 2 ** 20;
const CONNECTIONS = 256;

// Listens (pausing every accepted socket: the server never reads), says so, then on a line from
// the parent opens the connections and writes to each until the kernel takes no more.
const CHILD = `
const net = require('node:net');
const [path, n] = [process.argv[1], Number(process.argv[2])];
const chunk = Buffer.alloc(64 << 10, 7);
const held = [];
net.createServer({ pauseOnConnect: true }, (s) => held.push(s)).listen(path, () => {
  process.stdout.write('listening\\n');
  process.stdin.once('data', () => {
    let full = 0;
    for (let i = 0; i < n; i++) {
      const c = net.connect(path, () => {
        while (c.write(chunk));
        if (++full === n) process.stdout.write('full\\n');
      });
      held.push(c);
    }
  });
});
`;

async function line(out: Readable, want: string): Promise<void> {
  let seen = '';
  while (!seen.includes(want)) seen += ((await once(out, 'data')) as [Buffer])[0].toString();
}

describe.skipIf(skip !== null)('the kernel part of the working set in a real memory cgroup', () => {
  const dir = mkdtempSync(join(tmpdir(), 'attestorm-wsparts-'));
  const cg = skip ? null : Cgroup.create({ version: 'v1', memoryBase: V1, cpuBase: null }, `attestorm-wsparts-test-${process.pid}`);
  afterAll(async () => {
    await cg?.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  it('grows with full socket buffers while RSS does not, and stays within the working set', async () => {
    const child = spawnInCgroup(cg, process.execPath, ['-e', CHILD, join(dir, 'agent.sock'), String(CONNECTIONS)], { stdio: ['pipe', 'pipe', 'inherit'] });
    try {
      await line(child.stdout!, 'listening');
      const sampler = cgroupMemorySampler({ cgroup: cg });
      const before = sampler.sample(0) as MemorySample;
      child.stdin!.write('go\n');
      await line(child.stdout!, 'full');
      const after = sampler.sample(1) as MemorySample;
      // This host may run without kernel-memory accounting (cgroup.memory=nokmem): then the part
      // is not available, never 0.
      if (!existsSync(join(cg!.path, 'memory.kmem.usage_in_bytes')) || before.kernelBytes === null) {
        skipNote('working-set-parts.slow.test.ts kernel part', 'no kernel-memory accounting on this host');
        expect(after.kernelBytes).toBeNull();
      } else {
        const grown = (k: 'kernelBytes' | 'workingSetBytes' | 'rssBytes') => (after[k] ?? 0) - (before[k] ?? 0);
        console.log(
          `${CONNECTIONS} full connections: kernel +${(grown('kernelBytes') / MiB).toFixed(1)} MiB, working set +${(grown('workingSetBytes') / MiB).toFixed(1)} MiB, RSS +${(grown('rssBytes') / MiB).toFixed(1)} MiB`,
        );
        // At least 64 KiB per connection in the kernel (a Unix socket takes ~200 KiB by default).
        expect(grown('kernelBytes')).toBeGreaterThan(CONNECTIONS * 64 * 1024);
        expect(grown('workingSetBytes')).toBeGreaterThan(grown('kernelBytes') * 0.8);
        expect(grown('rssBytes')).toBeLessThan(grown('kernelBytes') / 2);
        expect(after.kernelBytes! + after.rssBytes!).toBeLessThanOrEqual(after.workingSetBytes! + 2 * MiB);
        expect(after.activeFileBytes).not.toBeNull();
        expect(after.shmemBytes).not.toBeNull();
      }
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  });
});
