// `attestorm agent` as other tools use it: spawn the CLI, wait for the ready line, call the
// socket, SIGTERM → exit 0 with the socket gone; bad flags → exit 2 naming the flag, nothing listening.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { newClient, unary } from '../agent/harness.js';
import { bundleEntry, PROJECT_ROOT } from '../../src/util/index.js';

const BIN = fileURLToPath(new URL('../../bin/attestorm.js', import.meta.url));
const children: ChildProcess[] = [];
const dirs: string[] = [];

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'attestorm-cli-'));
  dirs.push(d);
  return d;
}

interface Run {
  child: ChildProcess;
  ready: Promise<{ event: string; pid: number; socket: string; metrics: string | null }>;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

function run(args: string[], opts: { ipc?: boolean; argv0?: string[] } = {}): Run {
  const child = spawn(process.execPath, [...(opts.argv0 ?? [BIN]), ...args], { stdio: ['ignore', 'pipe', 'pipe', ...(opts.ipc ? (['ipc'] as const) : [])] });
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  // 'exit' then the end of stderr: with an IPC channel the parent closed, 'close' never comes.
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    child.once('exit', (code, signal) => {
      if (child.stderr!.readableEnded) resolve({ code, signal, stderr });
      else child.stderr!.once('end', () => resolve({ code, signal, stderr }));
    }),
  );
  const ready = new Promise<Run['ready'] extends Promise<infer T> ? T : never>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ready line within 20 s; stderr: ${stderr}`)), 20_000);
    createInterface({ input: child.stdout! }).once('line', (line) => {
      clearTimeout(timer);
      resolve(JSON.parse(line));
    });
    void exit.then((e) => {
      clearTimeout(timer);
      reject(new Error(`agent exited (${e.code ?? e.signal}) before ready: ${e.stderr}`));
    });
  });
  ready.catch(() => {});
  return { child, ready, exit };
}

describe('attestorm agent', () => {
  it('prints one ready line, serves the socket and metrics, and drains on SIGTERM with exit 0', async () => {
    const dir = tmp();
    const socket = join(dir, 'nested', 'agent.sock');
    const r = run(['agent', '--socket', socket, '--metrics', '127.0.0.1:0', '--placement', 'pre-attestation', '--limit', 'fetch_jwt_svid=1000']);
    const ready = await r.ready;
    expect(ready.event).toBe('ready');
    expect(ready.pid).toBe(r.child.pid);
    expect(ready.socket).toBe(socket);
    expect(ready.metrics).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(ready.metrics).not.toMatch(/:0\//);
    const client = newClient(socket);
    try {
      const res = await unary<object, { svids: { spiffe_id: string }[] }>(client, 'FetchJWTSVID', { audience: ['cli'] });
      expect(res.svids[0]!.spiffe_id).toBe(`spiffe://example.org/uid/${process.getuid!()}`);
    } finally {
      client.close();
    }
    const metrics = await (await fetch(ready.metrics!)).text();
    expect(metrics).toMatch(/^workload_api_calls_total\{method="FetchJWTSVID",code="OK"\} 1$/m);
    r.child.kill('SIGTERM');
    const e = await r.exit;
    expect(e.code).toBe(0);
    expect(existsSync(socket)).toBe(false);
  });

  it('overlays --config with flags: the flag wins, the file supplies the rest', async () => {
    const dir = tmp();
    const socket = join(dir, 'agent.sock');
    const config = join(dir, 'agent.yaml');
    writeFileSync(config, `socket: ${socket}\ntrustDomain: file.example\nrateLimit:\n  placement: post-attestation\n  limits:\n    fetch_jwt_svid: 1\n`);
    const r = run(['agent', '--config', config, '--trust-domain', 'flag.example', '--limit', 'fetch_x509_svid=5']);
    const ready = await r.ready;
    expect(ready.socket).toBe(socket);
    expect(ready.metrics).toBeNull();
    const client = newClient(socket);
    try {
      const res = await unary<object, { svids: { spiffe_id: string }[] }>(client, 'FetchJWTSVID', { audience: ['cli'] });
      expect(res.svids[0]!.spiffe_id).toBe(`spiffe://flag.example/uid/${process.getuid!()}`);
      // The file's fetch_jwt_svid limit of 1 survives the --limit for another method.
      const second = await unary(client, 'FetchJWTSVID', { audience: ['cli'] }).then(
        () => 'ok',
        (e: { details: string }) => e.details,
      );
      expect(second).toBe('rate limit exceeded for /SpiffeWorkloadAPI/FetchJWTSVID');
    } finally {
      client.close();
    }
    r.child.kill('SIGINT');
    expect((await r.exit).code).toBe(0);
    expect(existsSync(socket)).toBe(false);
  });

  for (const [flags, named] of [
    [['--placement', 'nowhere'], /placement/],
    [['--limit', 'fetch_jwt_svid=-1'], /--limit/],
    [['--limit', 'fetch_everything=3'], /--limit/],
    [['--trust-domain', 'Not A Domain'], /--trust-domain/],
    [['--metrics', 'localhost'], /--metrics/],
    [['--key', 'selector-set', '--placement', 'pre-attestation'], /--key/],
    [['--bogus-flag', '1'], /bogus-flag/],
  ] as const) {
    it(`rejects ${flags.join(' ')} with exit 2 naming the flag, before anything listens`, async () => {
      const dir = tmp();
      const socket = join(dir, 'agent.sock');
      const r = run(['agent', '--socket', socket, ...flags]);
      const e = await r.exit;
      expect(e.code).toBe(2);
      expect(e.stderr).toMatch(named);
      expect(existsSync(socket)).toBe(false);
    });
  }
});

describe('both agent entry points stop the same way', () => {
  // `attestorm agent` (by hand) and the bundled entry the runner starts (node <bundle> <config>).
  const entries = {
    'attestorm agent': async (socket: string, ipc: boolean) => run(['agent', '--socket', socket], { ipc }),
    'runner entry': async (socket: string, ipc: boolean) => {
      const config = join(tmp(), 'agent.yaml');
      writeFileSync(config, `socket: ${socket}\nattestors: [unix]\n`);
      return run([config], { ipc, argv0: [await bundleEntry(join(PROJECT_ROOT, 'src/targets/agent-entry.ts'))] });
    },
  };
  for (const [name, start] of Object.entries(entries)) {
    for (const how of ['SIGTERM', 'SIGINT', 'owner gone'] as const) {
      it(`${name}: ${how} drains, removes the socket and exits 0`, async () => {
        const socket = join(tmp(), 'agent.sock');
        const r = await start(socket, how === 'owner gone');
        await r.ready;
        expect(existsSync(socket)).toBe(true);
        if (how === 'owner gone') r.child.disconnect();
        else r.child.kill(how);
        const e = await r.exit;
        expect({ code: e.code, signal: e.signal }).toEqual({ code: 0, signal: null });
        expect(e.stderr).toContain(how === 'owner gone' ? 'owner gone (IPC channel closed), draining' : `${how}, draining`);
        expect(existsSync(socket)).toBe(false);
      });
    }
  }
});
