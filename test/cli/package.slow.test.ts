// The npm package as a user gets it: `npm pack`, `npm install <tarball>` in an empty folder, then
// the installed CLI through npx — help, init, validate, the agent answering grpc.health.v1 on a
// socket, and (root on a cgroup host) a short run with its results.json and printed verdict.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectCgroupHost } from '../../src/cgroup/index.js';
import { healthClientConstructor, type HealthCheckResponse } from '../../src/proto/index.js';
import { PROJECT_ROOT } from '../../src/util/index.js';
import { skipNote } from '../support/skip-note.js';

const base = mkdtempSync(join(tmpdir(), 'attestorm-package-'));
const app = join(base, 'app');
const children: ChildProcess[] = [];
const agentPids: number[] = [];
afterAll(() => {
  for (const pid of agentPids) killIfAlive(pid);
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  rmSync(base, { recursive: true, force: true });
});

function killIfAlive(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

// npm's own variables from an `npm test` around this (npm_package_*, npm_config_local_prefix, …)
// would point the inner npm at the checkout; the cache and registry settings stay.
const KEEP_NPM = new Set(['npm_config_cache', 'npm_config_registry', 'npm_config_userconfig']);
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_') || KEEP_NPM.has(k.toLowerCase())));

function sh(cmd: string, args: string[], cwd: string, timeout = 120_000) {
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', timeout });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, all: `${r.stdout}\n${r.stderr}${r.error ? `\n${r.error.message}` : ''}` };
}

/** The installed CLI only: --no keeps npx from fetching anything; after -- every flag is attestorm's. */
const NPX = ['--no', '--', 'attestorm'];
const npx = (...args: string[]) => sh('npx', [...NPX, ...args], app);

let tarball = '';
let packedFiles: string[] = [];

beforeAll(() => {
  const packed = sh('npm', ['pack', '--json', '--pack-destination', base], PROJECT_ROOT, 180_000);
  expect(packed.status, packed.all).toBe(0);
  // The prepack step prints its own line before npm's JSON.
  const info = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as Array<{ filename: string; files: Array<{ path: string }> }>;
  tarball = join(base, info[0]!.filename);
  packedFiles = info[0]!.files.map((f) => f.path);
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), '{ "name": "uses-attestorm", "private": true }\n');
  const installed = sh('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], app, 240_000);
  expect(installed.status, installed.all).toBe(0);
}, 420_000);

describe('the packed tarball, installed into an empty project', () => {
  it('ships prebuilt bundles, the scenarios, their schema, the proto and the native sources, and no TypeScript', () => {
    expect(packedFiles).toEqual(
      expect.arrayContaining([
        'bin/attestorm.js',
        'dist/cli-main.mjs',
        'dist/cli-agent-main.mjs',
        'dist/targets-agent-entry.mjs',
        'dist/load-worker-pod-main.min.cjs',
        'dist/load-worker-worker-main-h2.min.cjs',
        'proto/workload.proto',
        'scenarios/quick.yaml',
        'scenarios/scenario.schema.json',
        'src/load/native/main.c',
        'src/load/native/worker.h',
      ]),
    );
    expect(packedFiles.filter((f) => f.endsWith('.ts'))).toEqual([]);
    // The checkout is left as it was: postpack removes dist/.
    expect(existsSync(join(PROJECT_ROOT, 'dist'))).toBe(false);
  });

  it('npx attestorm --help lists the commands', () => {
    const r = npx('--help');
    expect(r.status, r.all).toBe(0);
    expect(r.stdout).toMatch(/attestorm run \[scenario\.\.\]/);
    expect(r.stdout).toMatch(/attestorm init \[dir\]/);
  });

  it('npx attestorm init writes a scenario whose $schema line finds the installed schema, and validate accepts it', () => {
    const init = npx('init');
    expect(init.status, init.all).toBe(0);
    const text = readFileSync(join(app, 'attestorm.yaml'), 'utf8');
    expect(text.split('\n')[0]).toBe('# yaml-language-server: $schema=./node_modules/attestorm/scenarios/scenario.schema.json');
    expect(existsSync(join(app, 'node_modules/attestorm/scenarios/scenario.schema.json'))).toBe(true);
    const again = npx('init');
    expect(again.status).toBe(2);
    expect(again.stderr).toContain('attestorm.yaml already exists');
    const valid = npx('validate', 'attestorm.yaml', 'node_modules/attestorm/scenarios/quick.yaml');
    expect(valid.status, valid.all).toBe(0);
    expect(valid.stdout).toContain('attestorm.yaml: scenario starter');
    expect(valid.stdout).toContain('quick.yaml: scenario quick');
  });

  it('npx attestorm agent answers grpc.health.v1 on its socket and stops on SIGTERM', async () => {
    const socket = join(base, 'agent.sock');
    const child = spawn('npx', [...NPX, 'agent', '--socket', socket], { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const ready = await new Promise<{ socket: string; pid: number }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ready line within 60 s; stderr: ${stderr}`)), 60_000);
      createInterface({ input: child.stdout! }).once('line', (line) => {
        clearTimeout(timer);
        resolve(JSON.parse(line) as { socket: string; pid: number });
      });
      void exited.then((code) => reject(new Error(`the agent exited (${code}) before it was ready: ${stderr}`)));
    });
    expect(ready.socket).toBe(socket);
    agentPids.push(ready.pid);
    const Health = healthClientConstructor();
    const client = new Health(`unix:${socket}`, grpc.credentials.createInsecure());
    const res = await new Promise<HealthCheckResponse>((resolve, reject) =>
      client.Check({ service: '' }, new grpc.Metadata(), { deadline: Date.now() + 10_000 }, (err, r) => (err ? reject(err) : resolve(r!))),
    );
    client.close();
    expect(res.status).toBe('SERVING');
    // The agent itself, as a supervisor would signal it: npx does not pass SIGTERM on. npx then
    // exits with the agent's status.
    process.kill(ready.pid, 'SIGTERM');
    expect(await exited, stderr).toBe(0);
    expect(existsSync(socket)).toBe(false);
  });

  const { host, reason } = detectCgroupHost();
  const runSkip = process.geteuid?.() !== 0 ? 'a run needs root for the agent’s memory cgroup' : !host ? reason : null;
  if (runSkip) skipNote('package.slow.test.ts: npx attestorm run from the installed package', runSkip);

  it.skipIf(runSkip !== null)('npx attestorm run runs the init scenario: results.json in the run folder, the verdict printed', () => {
    const out = join(app, 'run');
    const r = sh('npx', [...NPX, 'run', 'attestorm.yaml', '--variants', 'pre-attestation', '--duration', '2s', '--out', out], app, 240_000);
    // 0 or 1: a 2 s storm on a busy machine may miss an expectation; the run itself must complete.
    expect([0, 1], r.all.slice(-3000)).toContain(r.status);
    const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as { status: string; verdict: string };
    expect(results.status).toBe('complete');
    expect(r.all).toContain(`starter: complete, verdict ${results.verdict}`);
    expect(readdirSync(out)).toEqual(expect.arrayContaining(['report.html', 'pre-attestation.r1']));
  });
});
