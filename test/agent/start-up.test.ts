// What startAgent checks and cleans before it serves: stale socket files from a crashed agent,
// a socket another agent still serves, paths the kernel cannot bind, ports already taken.
import { spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { parseAgentConfig, startAgent } from '../../src/agent/index.js';
import { newClient, startTestAgent, tempDir, unary } from './harness.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function dir(): string {
  const d = tempDir();
  dirs.push(d);
  return d;
}

/** Leaves a socket file nobody listens on, the way a SIGKILLed agent does. */
async function staleSocket(path: string): Promise<void> {
  const child = spawn(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(path)}, () => console.log('up'))`], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
  child.kill('SIGKILL');
  await new Promise<void>((resolve) => child.once('exit', () => resolve()));
}

describe('agent start-up', () => {
  it('replaces a stale socket file left by a killed process and serves', async () => {
    const d = dir();
    const socket = join(d, 'agent.sock');
    await staleSocket(socket);
    expect(existsSync(socket)).toBe(true);
    const t = await startTestAgent({ socket });
    try {
      const c = newClient(socket);
      await expect(unary(c, 'FetchJWTSVID', { audience: ['a'] })).resolves.toBeTruthy();
      c.close();
    } finally {
      await t.stop();
    }
    expect(existsSync(socket)).toBe(false);
  });

  it('refuses a socket another process is serving, and leaves it alone', async () => {
    const d = dir();
    const socket = join(d, 'agent.sock');
    const other = createServer();
    await new Promise<void>((r) => other.listen(socket, r));
    try {
      await expect(startAgent(parseAgentConfig({ socket }))).rejects.toThrow(/in use by another process/);
      expect(existsSync(socket)).toBe(true);
    } finally {
      other.close();
    }
  });

  it('refuses to replace a path that is not a socket', async () => {
    const socket = join(dir(), 'agent.sock');
    writeFileSync(socket, 'precious');
    const err = await startAgent(parseAgentConfig({ socket })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/not a Unix socket/);
  });

  it('refuses a symlink at the socket path, and binds nothing through it', async () => {
    const d = dir();
    const outside = join(d, 'outside');
    mkdirSync(outside);
    const target = join(outside, 'elsewhere.sock');
    const socket = join(d, 'agent.sock');
    symlinkSync(target, socket);
    const err = await startAgent(parseAgentConfig({ socket })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/not a Unix socket/);
    expect(lstatSync(socket).isSymbolicLink()).toBe(true);
    expect(readdirSync(outside)).toEqual([]);
    // A symlink to a file: the file is neither replaced nor written.
    const file = join(outside, 'precious');
    writeFileSync(file, 'keep');
    rmSync(socket);
    symlinkSync(file, socket);
    await expect(startAgent(parseAgentConfig({ socket }))).rejects.toThrow(/not a Unix socket/);
    expect(readFileSync(file, 'utf8')).toBe('keep');
  });

  it('refuses a socket path longer than sun_path, naming the limit, before creating anything', async () => {
    const d = dir();
    const socket = join(d, 'x'.repeat(120), 'agent.sock');
    const err = await startAgent(parseAgentConfig({ socket })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/at most 107 bytes/);
    expect(existsSync(join(d, 'x'.repeat(120)))).toBe(false);
  });

  it('fails with a ConfigError when the metrics port is taken, and leaves no socket behind', async () => {
    const d = dir();
    const socket = join(d, 'agent.sock');
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    try {
      const err = await startAgent(parseAgentConfig({ socket, metrics: `127.0.0.1:${port}` })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toMatch(new RegExp(`metrics 127.0.0.1:${port}: cannot listen`));
      expect(existsSync(socket)).toBe(false);
    } finally {
      blocker.close();
    }
  });

  it('close() is idempotent and removes the socket file; destroy() after close() is harmless', async () => {
    const d = dir();
    const socket = join(d, 'agent.sock');
    const agent = await startAgent(parseAgentConfig({ socket }), { log: () => {} });
    expect(existsSync(socket)).toBe(true);
    await Promise.all([agent.close(), agent.close()]);
    expect(existsSync(socket)).toBe(false);
    agent.destroy();
  });
});
