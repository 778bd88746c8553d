// Starting and stopping the cluster's daemons: detached (they outlive `cluster up`), output to a log
// file each, at the spec's nice value whatever this process's own is, and recorded with their PID,
// binary and start time. Stopping goes by the record only: SIGTERM, then SIGKILL after a grace period.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { getPriority } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { PlatformError, TimeoutError } from '../errors.js';
import type { DaemonSpec } from './render-config.js';
import { isOurs, procfs, recordFor, type DaemonRecord } from './state.js';

export function logTail(file: string, lines = 8): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Starts a daemon; resolves once its PID runs the daemon's binary (not `nice`). */
export async function startDaemon(spec: DaemonSpec, logsDir: string): Promise<DaemonRecord> {
  if (!existsSync(spec.exe)) throw new PlatformError(`${spec.name}: ${spec.exe} does not exist`);
  mkdirSync(logsDir, { recursive: true });
  const log = join(logsDir, `${spec.name}.log`);
  const fd = openSync(log, 'a');
  // `nice -n` adjusts relative to our own nice value; a user who runs `nice attestorm cluster up` still gets daemons at spec.nice.
  const delta = spec.nice - getPriority();
  const child = spawn('nice', ['-n', String(delta), spec.exe, ...spec.args], { detached: true, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  const pid = child.pid;
  if (pid === undefined) throw new PlatformError(`${spec.name}: could not start ${spec.exe}`);
  let exited: string | null = null;
  child.once('exit', (code, signal) => (exited = `exit ${code ?? signal}`));
  child.unref();
  for (let i = 0; i < 200; i++) {
    if (exited) break;
    if (procfs.exe(pid)?.replace(/ \(deleted\)$/, '') === spec.exe) return recordFor(spec, pid, log);
    await sleep(10);
  }
  throw new PlatformError(`${spec.name} did not start (${exited ?? 'still not exec-ed after 2 s'}); its log ${log}:\n${logTail(log)}`);
}

/** SIGTERM, then SIGKILL after graceMs; only while the PID is still the recorded daemon. */
export async function stopDaemon(d: DaemonRecord, graceMs = 10_000): Promise<'stopped' | 'killed' | 'not running'> {
  if (!isOurs(d)) return 'not running';
  try {
    process.kill(d.pid, 'SIGTERM');
  } catch {
    return 'not running';
  }
  const until = Date.now() + graceMs;
  while (Date.now() < until) {
    if (!isOurs(d) || zombie(d.pid)) return 'stopped';
    await sleep(50);
  }
  if (isOurs(d)) {
    try {
      process.kill(d.pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  for (let i = 0; i < 100 && isOurs(d) && !zombie(d.pid); i++) await sleep(50);
  return 'killed';
}

function zombie(pid: number): boolean {
  const stat = procfs.stat(pid);
  return stat !== null && / Z /.test(stat.slice(stat.lastIndexOf(')')));
}

export interface TlsClient {
  ca: string;
  cert: string;
  key: string;
}

/** GET over HTTPS with client certificates; resolves with status and body, rejects on connection errors. */
export function httpsGet(url: string, tls: TlsClient, timeoutMs = 3000): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', ca: tls.ca, cert: tls.cert, key: tls.key, timeout: timeoutMs }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

/** Polls `probe` until it returns a value; fails naming `what` and the daemon's log tail. */
export async function waitFor<T>(what: string, probe: () => Promise<T | null>, timeoutMs: number, alive: () => boolean, log: string): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < until) {
    if (!alive()) throw new PlatformError(`${what}: the daemon exited; its log ${log}:\n${logTail(log)}`);
    try {
      const v = await probe();
      if (v !== null) return v;
    } catch (err) {
      last = (err as Error).message;
    }
    await sleep(250);
  }
  throw new TimeoutError(`${what} not within ${timeoutMs / 1000} s${last ? ` (${last})` : ''}; log ${log}:\n${logTail(log)}`);
}
