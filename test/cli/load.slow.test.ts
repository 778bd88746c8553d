// `attestorm load` as a user runs it: a real child process against a real server, JSON on stdout,
// the table on stderr; bad flags fail with exit 2 naming the flag before anything starts.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LoadSummary } from '../../src/load/index.js';
import { startBareServer, type BareServer } from '../load/support/bare-server.js';
import { waitNoLoadProcesses } from '../load/support/leftovers.js';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'attestorm.js');

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

let server: BareServer | null = null;
afterEach(async () => {
  const dir = server?.dir;
  await server?.close();
  server = null;
  expect(await waitNoLoadProcesses(dir ? [dir] : [])).toEqual([]);
});

describe('attestorm load', () => {
  it('runs pods × workers against a socket and prints the summary as JSON', async () => {
    server = await startBareServer({ counting: true });
    const r = await run([
      'load',
      '--socket',
      server.socket,
      '--pods',
      '2',
      '--workers',
      '2',
      '--duration',
      '2s',
      '--connection',
      'per-worker',
      '--client',
      'grpc-js',
      '--json',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout) as LoadSummary;
    expect(summary.workers).toBe(4);
    expect(summary.client).toBe('grpc-js');
    expect(Object.keys(summary.pods)).toHaveLength(2);
    expect(summary.totals.ok).toBeGreaterThan(0);
    expect(summary.totals.ok).toBe(server.calls.OK);
    expect(server.accepted).toBe(4);
    expect(summary.series).toHaveLength(2);
    expect(summary.latency.ok!.count).toBe(summary.totals.ok);
    expect(r.stderr).toMatch(/calls in 2\.0 s from 4 workers in 2 pods \(client grpc-js\)/);
    expect(r.stderr).toMatch(/^ok\s+\d/m);
  });

  it('bad flags exit 2 naming each flag and rule, and start nothing', async () => {
    server = await startBareServer({ counting: true });
    const r = await run([
      'load',
      '--socket',
      server.socket,
      '--workers',
      '0',
      '--duration',
      'soon',
      '--method',
      'FetchAll',
      '--rate',
      '-3',
      '--kubelet',
      '10.0.0.1:10250',
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--workers must be at least 1, got 0/);
    expect(r.stderr).toMatch(/--duration must be a duration like 500ms, 30s or 2m, got "soon"/);
    expect(r.stderr).toMatch(/--method must name one of FetchJWTSVID/);
    expect(r.stderr).toMatch(/--rate .*positive/);
    expect(r.stderr).toMatch(/--kubelet .*loopback/);

    const badClient = await run(['load', '--socket', server.socket, '--client', 'grpc-go']);
    expect(badClient.code).toBe(2);
    expect(badClient.stderr).toMatch(/client.*grpc-go/);
    expect(badClient.stderr).toMatch(/h2/);
    expect(r.stdout).toBe('');
    expect(server.accepted).toBe(0);

    const missing = await run(['load', '--socket', join(server.dir, 'nothing-here.sock')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--socket must be an existing Unix socket/);
  });
});
