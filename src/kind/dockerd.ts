// kind mode's own Docker engine: Debian's dockerd with a data root, exec root and socket of its
// own (nothing in the clone, nothing shared with another engine), runc behind the capability filter
// as its default runtime. Started detached and recorded with its PID, binary and start time, so
// `engineDown` stops exactly it, also from another process.
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { PlatformError } from '../errors.js';
import { isOurs, logTail, sh, startDaemon, stopDaemon, type DaemonRecord } from '../local-cluster/index.js';
import { dockerHost, type KindLayout } from './layout.js';
import { runcCapsScript } from './runc-caps.js';

const DOCKERD = '/usr/sbin/dockerd';
const RUNC = '/usr/sbin/runc';

/**
 * The cgroup the engine's containers go under (cgroup v1). Docker's default parent weighs all its
 * containers together like one process (cpu.shares 1024), so on a busy host a whole kind cluster got
 * one CPU's share; the kubelet weighs a node's pods by its CPUs (1024 each), as the local cluster's
 * kubepods is: this parent is weighted the same.
 */
export const CGROUP_PARENT = 'attestorm-kind';
const CGROUP_V1 = '/sys/fs/cgroup';

function cgroupV1(): boolean {
  return existsSync(join(CGROUP_V1, 'cpu', 'cpu.shares'));
}

function makeCgroupParent(): boolean {
  if (!cgroupV1()) return false;
  const dir = join(CGROUP_V1, 'cpu', CGROUP_PARENT);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'cpu.shares'), String(1024 * availableParallelism()));
  return true;
}

/** Removes the parent cgroup from every v1 hierarchy (empty once the engine's containers are gone); returns those left. */
function removeCgroupParent(): string[] {
  const left: string[] = [];
  if (!existsSync(CGROUP_V1)) return left;
  for (const c of readdirSync(CGROUP_V1)) {
    const dir = join(CGROUP_V1, c, CGROUP_PARENT);
    if (!existsSync(dir)) continue;
    try {
      rmdirSync(dir);
    } catch {
      left.push(dir);
    }
  }
  return left;
}

export function dockerdConfig(l: KindLayout, cgroupParent = false): Record<string, unknown> {
  return {
    ...(cgroupParent ? { 'cgroup-parent': `/${CGROUP_PARENT}` } : {}),
    'data-root': l.dockerDataRoot,
    'exec-root': l.dockerExecRoot,
    hosts: [dockerHost(l)],
    pidfile: `${l.dockerExecRoot}.pid`,
    'storage-driver': 'overlay2',
    runtimes: { 'attestorm-runc': { path: l.runcWrapper } },
    'default-runtime': 'attestorm-runc',
    'log-level': 'warn',
  };
}

/** The environment every docker/kind child needs to reach this engine. */
export function engineEnv(l: KindLayout, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...env, DOCKER_HOST: dockerHost(l) };
}

async function answers(l: KindLayout): Promise<boolean> {
  const r = await sh('docker', ['version', '--format', '{{.Server.Version}}'], { env: engineEnv(l), allowFail: true }).catch(() => null);
  return r !== null && r.code === 0;
}

function readRecord(l: KindLayout): DaemonRecord | null {
  try {
    return JSON.parse(readFileSync(l.dockerState, 'utf8')) as DaemonRecord;
  } catch {
    return null;
  }
}

export interface EngineUp {
  dockerHost: string;
  /** False when an engine of this layout was already running (it is then not ours to stop). */
  started: boolean;
}

/** Starts the engine unless it already answers on this layout's socket. */
export async function engineUp(l: KindLayout, log: (s: string) => void): Promise<EngineUp> {
  if (await answers(l)) return { dockerHost: dockerHost(l), started: false };
  if (!existsSync(DOCKERD)) throw new PlatformError(`${DOCKERD} is missing: apt-get install docker.io (kind mode runs its own engine from it)`);
  if (!existsSync(RUNC)) throw new PlatformError(`${RUNC} is missing: apt-get install runc`);
  const stale = readRecord(l);
  if (stale && isOurs(stale))
    throw new PlatformError(`dockerd pid ${stale.pid} runs but does not answer on ${l.dockerSocket}; stop it with \`attestorm kind engine down\``);
  for (const dir of [l.dockerDataRoot, l.dockerExecRoot, dirname(l.dockerSocket)]) mkdirSync(dir, { recursive: true });
  writeFileSync(l.runcWrapper, runcCapsScript(RUNC));
  chmodSync(l.runcWrapper, 0o755);
  writeFileSync(l.dockerConfig, `${JSON.stringify(dockerdConfig(l, makeCgroupParent()), null, 2)}\n`);
  rmSync(l.dockerSocket, { force: true });
  log(`starting dockerd (data root ${l.dockerDataRoot}, socket ${l.dockerSocket})`);
  // nice 0: kind's nodes, and so the pods in them, inherit the engine's nice value.
  const d = await startDaemon({ name: 'dockerd', exe: DOCKERD, args: ['--config-file', l.dockerConfig], nice: 0 }, dirname(l.dockerLog));
  writeFileSync(l.dockerState, `${JSON.stringify(d)}\n`);
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    if (!isOurs(d)) throw new PlatformError(`dockerd exited during start-up; its log ${d.log}:\n${logTail(d.log)}`);
    if (await answers(l)) return { dockerHost: dockerHost(l), started: true };
    await new Promise((r) => setTimeout(r, 250));
  }
  await stopDaemon(d);
  throw new PlatformError(`dockerd did not answer on ${l.dockerSocket} within 60 s; its log ${d.log}:\n${logTail(d.log)}`);
}

/** Stops the engine this layout recorded (its containers stop with it) and removes its cgroup parent; 'not running' when none. */
export async function engineDown(l: KindLayout): Promise<'stopped' | 'killed' | 'not running'> {
  const d = readRecord(l);
  if (!d) return 'not running';
  const r = await stopDaemon(d, 60_000);
  rmSync(l.dockerState, { force: true });
  const left = removeCgroupParent();
  if (left.length) throw new PlatformError(`dockerd ${r}, but its containers' cgroups remain: ${left.join(', ')}`);
  return r;
}

export async function engineRunning(l: KindLayout): Promise<boolean> {
  return answers(l);
}
