// A local spire-server for one variant run: config generated into the run folder, data and admin
// socket in a short temp folder, ready when /ready answers, and the admin commands the runner
// needs (entries, join tokens, the trust bundle). close() stops it (SIGTERM, SIGKILL after a grace).
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ChildProcessError, ConfigError, RunError } from '../errors.js';
import { onCleanup, stopChild } from '../util/index.js';
import { serverCli } from './cli.js';
import { renderServerConfig, serverAdminSocket } from './config-server.js';
import { checkBatchOutput, checkDeleteOutput, entriesJson, writeEntriesFile, type EntryJson, type PodForEntry } from './entries.js';
import { freeLoopbackPorts } from './free-port.js';
import { waitReady } from './health.js';
import type { HclTree } from './hcl.js';
import { lastLogLines } from './log-tail.js';

export interface StartSpireServerOptions {
  binary: string;
  /** Data, datastore and admin socket; short, since a socket path is limited to 107 bytes. */
  dir: string;
  /** Where server.conf, server.log and the entry files are kept. */
  outDir: string;
  trustDomain: string;
  startTimeoutMs?: number;
  logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  extraConfig?: HclTree;
  /** SIGTERM → SIGKILL grace on close (default 5 s). */
  graceMs?: number;
  /** Added to the server's environment (ATTESTORM_RUN_ID lets `attestorm cleanup` find it if we die). */
  env?: Record<string, string>;
}

// Longest usable sun_path on Linux (108 bytes with the terminating NUL).
export const MAX_SOCKET_PATH = 107;
const ENTRY_BATCH = 500;

export class SpireServer {
  readonly binary: string;
  readonly trustDomain: string;
  readonly port: number;
  readonly healthPort: number;
  readonly adminSocket: string;
  readonly configFile: string;
  readonly logFile: string;
  /** The stable parent of every workload entry: each join token is issued with this alias. */
  readonly aliasId: string;
  readonly #child: ChildProcess;
  readonly #dir: string;
  readonly #outDir: string;
  readonly #graceMs: number;
  #unregister: () => void = () => {};
  #closing: Promise<void> | null = null;
  #batches = 0;
  /** Pod UID → its entry's ID (null when the entry existed before this server object made it). */
  readonly #registered = new Map<string, string | null>();

  constructor(o: StartSpireServerOptions, child: ChildProcess, ports: { port: number; healthPort: number }, files: { configFile: string; logFile: string }) {
    this.binary = o.binary;
    this.trustDomain = o.trustDomain;
    this.port = ports.port;
    this.healthPort = ports.healthPort;
    this.adminSocket = serverAdminSocket(o.dir);
    this.configFile = files.configFile;
    this.logFile = files.logFile;
    this.aliasId = `spiffe://${o.trustDomain}/attestorm/node`;
    this.#child = child;
    this.#dir = o.dir;
    this.#outDir = o.outDir;
    this.#graceMs = o.graceMs ?? 5000;
    this.#unregister = onCleanup(() => this.close());
  }

  get pid(): number | null {
    return this.#child.pid ?? null;
  }

  /** Pods that have an entry (by UID). */
  get registeredPods(): number {
    return this.#registered.size;
  }

  /**
   * Creates an entry for every pod not registered yet, in batches of 500 through `entry create
   * -data`; entries that already exist count as created. Returns how many were new.
   */
  async registerPods(pods: readonly PodForEntry[]): Promise<number> {
    const fresh = pods.filter((p) => !this.#registered.has(p.uid));
    for (let i = 0; i < fresh.length; i += ENTRY_BATCH) {
      const batch = fresh.slice(i, i + ENTRY_BATCH);
      const ids = await this.#create(entriesJson(this.trustDomain, this.aliasId, batch).entries);
      batch.forEach((p, j) => this.#registered.set(p.uid, ids[j] ?? null));
    }
    return fresh.length;
  }

  /** Deletes the entries of pods that ended (as a controller deletes them with their pods). Returns how many. */
  async unregisterPods(uids: readonly string[]): Promise<number> {
    const ids = uids.map((u) => this.#registered.get(u)).filter((id): id is string => typeof id === 'string');
    for (const u of uids) this.#registered.delete(u);
    for (let i = 0; i < ids.length; i += ENTRY_BATCH) {
      const batch = ids.slice(i, i + ENTRY_BATCH);
      const file = join(this.#outDir, `entries-delete-${++this.#batches}.json`);
      writeFileSync(file, `${JSON.stringify({ ids: batch })}\n`);
      const { stdout } = await serverCli(this.binary, this.adminSocket, ['entry', 'delete', '-file', file, '-output', 'json']);
      checkDeleteOutput(stdout, batch.length);
    }
    return ids.length;
  }

  /**
   * An entry for processes of one OS group outside any pod (`unix:gid:<gid>`): readiness probes
   * that must not share an identity with a pod. Returns its SPIFFE ID.
   */
  async registerGroup(gid: number, name = 'probe'): Promise<string> {
    const spiffeId = `spiffe://${this.trustDomain}/attestorm/${name}`;
    await this.#create([{ spiffe_id: spiffeId, parent_id: this.aliasId, selectors: [{ type: 'unix', value: `gid:${gid}` }] }]);
    return spiffeId;
  }

  async #create(entries: EntryJson[]): Promise<Array<string | null>> {
    const file = join(this.#outDir, `entries-${++this.#batches}.json`);
    writeEntriesFile(file, { entries });
    const { stdout } = await serverCli(this.binary, this.adminSocket, ['entry', 'create', '-data', file, '-output', 'json']);
    return checkBatchOutput(stdout, entries.length).ids;
  }

  /** A single-use join token whose agent also gets the alias ID (the entries' parent). */
  async joinToken(ttlSeconds = 600): Promise<string> {
    const { stdout } = await serverCli(this.binary, this.adminSocket, [
      'token',
      'generate',
      '-spiffeID',
      this.aliasId,
      '-ttl',
      String(ttlSeconds),
      '-output',
      'json',
    ]);
    let value: unknown;
    try {
      value = (JSON.parse(stdout) as { value?: unknown }).value;
    } catch {
      value = /Token:\s*(\S+)/.exec(stdout)?.[1];
    }
    if (typeof value !== 'string' || value === '') throw new RunError(`spire-server token generate printed no token: ${stdout.slice(0, 200)}`);
    return value;
  }

  /** The server's trust bundle as PEM, for the agent's trust_bundle_path. */
  async bundlePem(): Promise<string> {
    const { stdout } = await serverCli(this.binary, this.adminSocket, ['bundle', 'show', '-format', 'pem']);
    if (!stdout.includes('-----BEGIN CERTIFICATE-----')) throw new RunError(`spire-server bundle show printed no PEM certificate: ${stdout.slice(0, 200)}`);
    return stdout;
  }

  /** Stops the server (SIGTERM, SIGKILL after the grace) and removes its data folder. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      try {
        await stopChild(this.#child, this.#graceMs);
      } finally {
        rmSync(this.#dir, { recursive: true, force: true });
        this.#unregister();
      }
    })();
    return this.#closing;
  }
}

/** Starts spire-server and waits until it is ready; a port lost to a race is retried with new ports. */
export async function startSpireServer(o: StartSpireServerOptions): Promise<SpireServer> {
  const adminSocket = serverAdminSocket(o.dir);
  if (Buffer.byteLength(adminSocket) > MAX_SOCKET_PATH)
    throw new ConfigError(`spire-server admin socket path ${adminSocket} is longer than ${MAX_SOCKET_PATH} bytes; use a shorter temp folder`);
  mkdirSync(join(o.dir, 'server-data'), { recursive: true, mode: 0o700 });
  mkdirSync(o.outDir, { recursive: true });
  const configFile = join(o.outDir, 'server.conf');
  const logFile = join(o.outDir, 'server.log');
  for (let attempt = 1; ; attempt++) {
    const [port, healthPort] = (await freeLoopbackPorts(2)) as [number, number];
    writeFileSync(configFile, renderServerConfig({ trustDomain: o.trustDomain, dir: o.dir, port, healthPort, logLevel: o.logLevel, extra: o.extraConfig }));
    const fd = openSync(logFile, 'a');
    let child: ChildProcess;
    try {
      // Own process group: a terminal's Ctrl-C reaches attestorm, which stops the server itself.
      child = spawn(o.binary, ['run', '-config', configFile], { stdio: ['ignore', fd, fd], detached: true, env: { ...process.env, ...o.env } });
    } finally {
      closeSync(fd);
    }
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (err) => reject(new ChildProcessError(`cannot start ${o.binary}: ${err.message}`, { cause: err })));
    });
    const server = new SpireServer(o, child, { port, healthPort }, { configFile, logFile });
    try {
      await waitReady({ what: `spire-server (${o.binary})`, child, healthPort, timeoutMs: o.startTimeoutMs ?? 30_000, logFile });
      return server;
    } catch (err) {
      await server.close();
      const raced = lastLogLines(logFile, 5).some((l) => l.includes('address already in use'));
      if (!raced || attempt >= 3) throw err;
      mkdirSync(join(o.dir, 'server-data'), { recursive: true, mode: 0o700 });
    }
  }
}
