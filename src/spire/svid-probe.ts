// Readiness by a real SVID: a process inside a sandbox pod (its cgroup, its uid) asks the agent
// for a JWT-SVID until it gets one. SPIRE's entries take ~10 s to reach the agent, so a ready
// health check alone does not mean a pod can be served.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { TimeoutError } from '../errors.js';
import { GRPC_STATUS_NAMES } from '../util/grpc-status.js';
import { bundleSpec, isRunning, stopChild, type BundleSpec } from '../util/index.js';

export interface ProbeRequest {
  socket: string;
  audience: string;
  timeoutMs: number;
  intervalMs: number;
}

export type ProbeResult =
  { ok: true; spiffeId: string; attempts: number; afterMs: number } | { ok: false; attempts: number; afterMs: number; lastCode: number; lastDetails: string };

/** Starts the probe process somewhere: inside a sandbox pod (Sandbox.spawnInPod) or as a process of its own (asGroup). */
export type ProbeSpawn = (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess;

/**
 * The probe as a process of its own with a group of its own, outside any pod: the unix attestor
 * gives it `unix:gid:<gid>`, which an entry can select without matching any pod process.
 */
export function asGroup(gid: number): ProbeSpawn {
  return (command, args, options) => spawn(command, args, { ...options, gid });
}

/** What inPod needs of a sandbox: a process started in one of its pods, and a file every pod can read. */
export interface ProbePodHost<P> {
  spawnInPod(pod: P, command: string, args: readonly string[], options?: SpawnOptions): ChildProcess;
  shareWithPods(file: string): string;
}

/**
 * The probe inside a sandbox pod (its cgroup, its uid): its bundle, the first argument probeSvid
 * passes, read from the sandbox's copy when the pod runs as a uid that cannot reach the original.
 */
export function inPod<P>(host: ProbePodHost<P>, pod: P): ProbeSpawn {
  return (command, [bundle, ...rest], options) => host.spawnInPod(pod, command, [host.shareWithPods(bundle!), ...rest], options);
}

export interface ProbeSvidOptions {
  spawn: ProbeSpawn;
  /** Who is asking, for messages ("pod storm-abc"). */
  label: string;
  socket: string;
  timeoutMs: number;
  audience?: string;
  intervalMs?: number;
  /** An abort stops the probe (its promise then rejects). */
  signal?: AbortSignal;
}

export const SVID_PROBE_BUNDLE: BundleSpec = { entry: 'src/spire/svid-probe-main.ts', minify: true };

let bundled: Promise<string> | null = null;
function probeBundle(): Promise<string> {
  bundled ??= bundleSpec(SVID_PROBE_BUNDLE).catch((err: unknown) => {
    bundled = null;
    throw err;
  });
  return bundled;
}

/**
 * Resolves with the SPIFFE ID the pod received; throws TimeoutError quoting the last answer
 * (e.g. PERMISSION_DENIED "no identity issued" while entries have not arrived).
 */
export async function probeSvid(o: ProbeSvidOptions): Promise<Extract<ProbeResult, { ok: true }>> {
  const req: ProbeRequest = { socket: o.socket, audience: o.audience ?? 'attestorm-probe', timeoutMs: o.timeoutMs, intervalMs: o.intervalMs ?? 500 };
  const bundle = await probeBundle();
  const child = o.spawn(process.execPath, [bundle, JSON.stringify(req)], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
  let stderr = '';
  child.stderr?.on('data', (b: Buffer) => (stderr = (stderr + b.toString()).slice(-2000)));
  const onAbort = () => child.kill('SIGKILL');
  o.signal?.addEventListener('abort', onAbort, { once: true });
  if (o.signal?.aborted) onAbort();
  try {
    const result = await new Promise<ProbeResult>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new TimeoutError(`${o.label}: the SVID probe did not report within ${o.timeoutMs + 10_000} ms`)),
        o.timeoutMs + 10_000,
      );
      child.once('message', (m) => {
        clearTimeout(timer);
        resolve(m as ProbeResult);
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(
          new TimeoutError(`${o.label}: the SVID probe exited without an answer (${signal ?? `code ${code}`}): ${stderr.trim().slice(-500) || 'no output'}`),
        );
      });
      child.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
    if (!result.ok) {
      const code = GRPC_STATUS_NAMES[result.lastCode] ?? `code ${result.lastCode}`;
      throw new TimeoutError(
        `${o.label} received no JWT-SVID from ${o.socket} within ${o.timeoutMs} ms (${result.attempts} attempts; last answer ${code}: ${result.lastDetails})`,
      );
    }
    return result;
  } finally {
    o.signal?.removeEventListener('abort', onAbort);
    if (isRunning(child)) await stopChild(child, 1000);
  }
}
