// A Unix socket something listens on (and never answers), in a temp dir of its own, for the
// duration of a test file: enough for the CLI's checks that a socket is there.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';

export function useListeningSocket(prefix: string): { dir: string; socket: string } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const socket = join(dir, 'agent.sock');
  let server: Server;
  beforeAll(() => new Promise<void>((r) => (server = createServer().listen(socket, () => r()))));
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir, socket };
}
