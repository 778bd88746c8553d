// The agent identifies callers by what the kernel says (SO_PEERCRED), not by anything they send:
// a separate child process calls, and the identity it gets is derived from its real uid, while
// the agent saw its real pid.
import { rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPeerCredReader } from '../../src/agent/index.js';
import { fakeProcRoot, spawnCaller, startTestAgent, tempDir, unary, type TestAgent } from './harness.js';

describe('SO_PEERCRED', () => {
  it('reads the pid, uid and gid of the process at the other end of a Unix socket', async () => {
    const read = createPeerCredReader();
    const dir = tempDir();
    const path = join(dir, 's.sock');
    const seen = new Promise<ReturnType<typeof read>>((resolve, reject) => {
      const srv = createServer((sock) => {
        try {
          resolve(read(sock));
        } catch (err) {
          reject(err);
        }
        sock.destroy();
        srv.close();
      });
      srv.listen(path, () => connect(path).on('error', () => {}));
    });
    expect(await seen).toEqual({ pid: process.pid, uid: process.getuid!(), gid: process.getgid!() });
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('caller identity through the agent', () => {
  let t: TestAgent;
  beforeAll(async () => {
    t = await startTestAgent();
  });
  afterAll(() => t?.stop());

  it("derives spiffe://<td>/uid/<uid> from a child process's kernel credentials", async () => {
    const child = await spawnCaller(t.socketPath, 'now');
    try {
      const r = await child.result();
      expect(r.code).toBe(grpc.status.OK);
      expect(r.pid).toBe(child.pid);
      expect(r.spiffeIds).toEqual([`spiffe://example.org/uid/${r.uid}`]);
    } finally {
      child.kill();
    }
  });
});

describe('the agent sees the caller pid', () => {
  // The agent's procRoot holds only the child's pid: had the agent used any other pid (its own, a
  // guess) attestation would fail, so an OK proves it read the child's real pid from the kernel.
  let t: TestAgent | undefined;
  afterAll(() => t?.stop());

  it('attests exactly the pid of the child that connected, and not this process', async () => {
    const dir = tempDir();
    const socketPath = join(dir, 'agent.sock');
    const caller = await spawnCaller(socketPath, 'wait');
    try {
      const procRoot = fakeProcRoot(dir, { [caller.pid]: '0::/user.slice\n' });
      t = await startTestAgent({ procRoot, socket: socketPath });
      const r = await caller.go();
      expect(r.code).toBe(grpc.status.OK);
      expect(r.pid).toBe(caller.pid);
      expect(r.spiffeIds).toEqual([`spiffe://example.org/uid/${r.uid}`]);
      const own = await unary(t.client(), 'FetchJWTSVID', { audience: ['a'] }).then(
        () => ({ code: 0, details: '' }),
        (e: grpc.ServiceError) => ({ code: e.code, details: e.details }),
      );
      expect(own).toEqual({ code: grpc.status.UNAVAILABLE, details: 'workload attestation failed' });
    } finally {
      caller.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
