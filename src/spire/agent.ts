// spire-agent for one variant: prepareSpireAgent writes its config (ports, sockets, the kubelet
// emulator, SPIRE's limiter) once; each start passes a fresh join token on the command line, so
// a supervisor can restart it like any other agent. startSpireAgent runs one instance on its own.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnInCgroup, type Cgroup } from '../cgroup/index.js';
import type { LimitedPlacement } from '../contract/index.js';
import { ChildProcessError, ConfigError, RunError } from '../errors.js';
import { onCleanup, stopChild } from '../util/index.js';
import { renderAgentConfig, type KubeletAccess } from './config-agent.js';
import { freeLoopbackPorts } from './free-port.js';
import { waitReady } from './health.js';
import type { HclTree } from './hcl.js';
import { SPIRE_RATE_LIMIT_KEYS, SPIRE_RATE_LIMIT_METHODS, type SpireRateLimits } from './options.js';
import type { SpireAgentGrammar } from './release.js';
import { MAX_SOCKET_PATH } from './server.js';

export interface PrepareSpireAgentOptions {
  binary: string;
  trustDomain: string;
  serverPort: number;
  /** The server's trust bundle (PEM), written for trust_bundle_path. */
  bundlePem: string;
  /** Data dir, Workload API socket and trust bundle (short: socket paths are limited). */
  dir: string;
  /** Where agent.conf is kept (and, by convention, agent.log). */
  outDir: string;
  kubelet: KubeletAccess;
  rateLimits?: SpireRateLimits;
  k8s?: { pollRetryIntervalMs?: number; maxPollAttempts?: number };
  logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  extraConfig?: HclTree;
  /** The release's config grammar (spireAgentGrammar of its --version); absent: the newest. */
  grammar?: SpireAgentGrammar;
  /**
   * Where the build's limiter sits. A pre-attestation build (the limiter moved before attestation)
   * must say so in its "rate limiting enabled" lines; a released build must not. Default post-attestation.
   */
  limiterPlacement?: LimitedPlacement;
  /** Added to the agent's environment (ATTESTORM_RUN_ID lets `attestorm cleanup` find it if we die). */
  env?: Record<string, string>;
}

export interface SpireAgentCommand {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

export class SpireAgentPlan {
  constructor(
    readonly binary: string,
    readonly configFile: string,
    readonly socketPath: string,
    readonly dataDir: string,
    readonly healthPort: number,
    readonly telemetryPort: number,
    readonly rateLimits: SpireRateLimits | undefined,
    readonly extraEnv: Record<string, string> = {},
    readonly limiterPlacement: LimitedPlacement = 'post-attestation',
  ) {}

  /** SPIRE's Prometheus endpoint (it answers on every path). */
  get metricsUrl(): string {
    return `http://127.0.0.1:${this.telemetryPort}/metrics`;
  }

  /**
   * The command for one start with `token`. The environment drops MY_NODE_NAME, which would
   * otherwise point the k8s attestor's secure client at a host of that name.
   */
  command(token: string): SpireAgentCommand {
    const env = { ...process.env, ...this.extraEnv };
    delete env.MY_NODE_NAME;
    return { command: this.binary, args: ['run', '-config', this.configFile, '-joinToken', token], env };
  }

  /**
   * Clears what a previous instance left in the data dir: with the in-memory key manager its
   * stored SVID has no key any more, and each start attests afresh with its new token.
   */
  resetDataDir(): void {
    rmSync(this.dataDir, { recursive: true, force: true });
    mkdirSync(this.dataDir, { recursive: true, mode: 0o700 });
  }

  /** Methods SPIRE must log "rate limiting enabled" for, given the configured limits. */
  expectedLimitedMethods(): string[] {
    return SPIRE_RATE_LIMIT_KEYS.filter((k) => (this.rateLimits?.[k] ?? 0) > 0).map((k) => SPIRE_RATE_LIMIT_METHODS[k]);
  }
}

export async function prepareSpireAgent(o: PrepareSpireAgentOptions): Promise<SpireAgentPlan> {
  const socketPath = join(o.dir, 'workload', 'api.sock');
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH)
    throw new ConfigError(`spire-agent socket path ${socketPath} is longer than ${MAX_SOCKET_PATH} bytes; use a shorter temp folder`);
  const dataDir = join(o.dir, 'agent-data');
  // Pods may run as other users: the socket's folder must let them through.
  mkdirSync(join(o.dir, 'workload'), { recursive: true, mode: 0o755 });
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  mkdirSync(o.outDir, { recursive: true });
  const trustBundlePath = join(o.dir, 'trust-bundle.pem');
  writeFileSync(trustBundlePath, o.bundlePem);
  const [healthPort, telemetryPort] = (await freeLoopbackPorts(2)) as [number, number];
  const configFile = join(o.outDir, 'agent.conf');
  writeFileSync(
    configFile,
    renderAgentConfig({
      trustDomain: o.trustDomain,
      serverPort: o.serverPort,
      dataDir,
      socketPath,
      trustBundlePath,
      kubelet: o.kubelet,
      telemetryPort,
      healthPort,
      rateLimits: o.rateLimits,
      k8s: o.k8s,
      logLevel: o.logLevel,
      extra: o.extraConfig,
      ...(o.grammar ? { grammar: o.grammar } : {}),
    }),
  );
  return new SpireAgentPlan(o.binary, configFile, socketPath, dataDir, healthPort, telemetryPort, o.rateLimits, o.env, o.limiterPlacement);
}

// "Workload API/SDS rate limiting enabled" with method=<path> limit=<n>, once per limited method.
const LIMITER_LINE = 'rate limiting enabled';

// SPIRE retries node attestation forever with back-off; a refused join token never heals.
const REFUSED_TOKEN = /failed to attest: (join token [^"]*)/;

/** The server's refusal of the agent's join token, from a log line; null for any other line. */
export function joinTokenRefusal(line: string): string | null {
  const m = REFUSED_TOKEN.exec(line);
  return m ? `the server refused its join token (${m[1]!.replace(/\\"/g, '"')})` : null;
}

function refusalInLog(logFile: string, from: number): string | null {
  try {
    const text = readFileSync(logFile).subarray(from).toString('utf8');
    for (const line of text.split('\n')) {
      const r = joinTokenRefusal(line);
      if (r) return r;
    }
  } catch {
    // No log yet.
  }
  return null;
}

/**
 * The limited method (and its limit) a log line announces, or null for any other line. placement:
 * what the line says of where the limiter sits; released builds say nothing (post-attestation).
 */
export function limiterAnnouncement(line: string): { method: string; limit: number; placement: LimitedPlacement } | null {
  if (!line.includes(LIMITER_LINE)) return null;
  // Text format (method=/x limit=10) or JSON ("method":"/x","limit":10).
  const method = /\bmethod"?[=:]"?([^\s",}]+)/.exec(line)?.[1];
  if (!method) return null;
  const placement = /\bplacement"?[=:]"?pre-attestation\b/.test(line) ? 'pre-attestation' : 'post-attestation';
  return { method, limit: Number(/\blimit"?[=:]"?(\d+)/.exec(line)?.[1] ?? NaN), placement };
}

/** Announced methods whose placement is not the one the variant declares, as a sentence; null when all agree. */
export function placementMismatch(plan: SpireAgentPlan, announced: ReadonlyMap<string, LimitedPlacement>): string | null {
  const wrong = [...announced].filter(([, p]) => p !== plan.limiterPlacement);
  if (!wrong.length) return null;
  return `the variant declares limiterPlacement ${plan.limiterPlacement}, but ${plan.binary} announced its limiter ${wrong[0]![1]} for ${wrong.map(([m]) => m).join(', ')}`;
}

/** Methods (and limits) the agent's log says SPIRE's limiter is on for, reading from byte `from`. */
export function limitedMethodsInLog(logFile: string, from = 0): Map<string, number> {
  const out = new Map<string, number>();
  let text: string;
  try {
    text = readFileSync(logFile).subarray(from).toString('utf8');
  } catch {
    return out;
  }
  for (const line of text.split('\n')) {
    const a = limiterAnnouncement(line);
    if (a) out.set(a.method, a.limit);
  }
  return out;
}

/** Configured methods the agent did not announce; empty when all are (or none are configured). */
export function unannouncedLimits(plan: SpireAgentPlan, seen: ReadonlyMap<string, number>): string[] {
  return plan.expectedLimitedMethods().filter((m) => !seen.has(m));
}

export function limiterNotLoggedError(plan: SpireAgentPlan, missing: readonly string[], logFile: string): RunError {
  return new RunError(
    `spire-agent did not log "Workload API/SDS ${LIMITER_LINE}" for ${missing.join(', ')} although rateLimits set it; ` +
      `this build (${plan.binary}) may predate SPIRE's Workload API limiter. See ${logFile}`,
  );
}

/**
 * Throws RunError when a configured limit was not announced by the agent: a build without the
 * limiter (before SPIRE PR #6724) or a misspelled key would otherwise run unlimited in silence.
 */
export function assertLimiterLogged(plan: SpireAgentPlan, logFile: string, from = 0): void {
  const missing = unannouncedLimits(plan, limitedMethodsInLog(logFile, from));
  if (missing.length > 0) throw limiterNotLoggedError(plan, missing, logFile);
}

export interface StartSpireAgentOptions {
  token: string;
  /** Run inside this cgroup (the variant's memory cgroup); null or absent: where we are. */
  cgroup?: Cgroup | null;
  logFile: string;
  startTimeoutMs?: number;
  graceMs?: number;
}

/** One running spire-agent, reaped on close or on attestorm's exit. */
export class RunningSpireAgent {
  readonly #unregister: () => void;
  #closing: Promise<void> | null = null;
  constructor(
    readonly plan: SpireAgentPlan,
    readonly child: ChildProcess,
    readonly logFile: string,
    readonly logStart: number,
    readonly graceMs: number,
  ) {
    this.#unregister = onCleanup(() => this.close());
  }

  get pid(): number | null {
    return this.child.pid ?? null;
  }

  close(): Promise<void> {
    this.#closing ??= stopChild(this.child, this.graceMs).then(() => this.#unregister());
    return this.#closing;
  }
}

function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/** Spawns the agent (its output drained into logFile by this process), waits for /ready, checks the limiter announced itself. */
export async function startSpireAgent(plan: SpireAgentPlan, o: StartSpireAgentOptions): Promise<RunningSpireAgent> {
  plan.resetDataDir();
  const { command, args, env } = plan.command(o.token);
  const logStart = fileSize(o.logFile);
  // This process, not the agent, writes the log: pages a process writes are charged to its own
  // memory cgroup, so an agent writing agent.log itself would fill its cgroup with page cache that
  // counts in the usage measured against its limit. Through pipes the cache is the runner's.
  const log = createWriteStream(o.logFile, { flags: 'a' });
  const spawnOpts = { stdio: ['ignore', 'pipe', 'pipe'] as ['ignore', 'pipe', 'pipe'], detached: true, env };
  const child: ChildProcess = o.cgroup ? spawnInCgroup(o.cgroup, command, args, spawnOpts) : spawn(command, args, spawnOpts);
  child.stdout!.pipe(log, { end: false });
  child.stderr!.pipe(log, { end: false });
  child.once('close', () => log.end());
  child.once('error', () => log.end());
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (err) => reject(new ChildProcessError(`cannot start ${command}: ${err.message}`, { cause: err })));
  });
  const agent = new RunningSpireAgent(plan, child, o.logFile, logStart, o.graceMs ?? 5000);
  try {
    await waitReady({
      what: `spire-agent (${plan.binary})`,
      child,
      healthPort: plan.healthPort,
      timeoutMs: o.startTimeoutMs ?? 30_000,
      logFile: o.logFile,
      failure: () => refusalInLog(o.logFile, logStart),
    });
    assertLimiterLogged(plan, o.logFile, logStart);
    return agent;
  } catch (err) {
    await agent.close();
    throw err;
  }
}
