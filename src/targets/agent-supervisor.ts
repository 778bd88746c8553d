// Owns the agent process of one variant run like a kubelet owns a container: starts it in its
// memory cgroup through a launcher (what to run, how to tell it is ready), tells OOM kills from other
// deaths, restarts it with the crash-loop back-off, measures downtime, and always reaps it.
import type { ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { setPriority } from 'node:os';
import { createInterface } from 'node:readline';
import { spawnInCgroup, type Cgroup } from '../cgroup/index.js';
import { ChildProcessError, TimeoutError } from '../errors.js';
import { exited, isRunning, stopChild } from '../util/index.js';
import type { EventSample } from '../contract/index.js';
import { readProcessMemory } from '../sample/index.js';
import { RestartBackoff, type BackoffOptions } from './backoff.js';
import { judgeExit, type DeathVerdict } from './oom-detector.js';

/** One start of the agent process. */
export interface AgentLaunch {
  file: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

export interface AgentReady {
  pid: number;
  /** Its metrics endpoint, when it has one. */
  metrics: string | null;
}

/** What an agent kind contributes to the supervisor: how to start it, and how to tell it is ready. */
export interface AgentLauncher {
  /** Called before every start (a SPIRE agent needs a fresh join token each time). */
  prepare(): Promise<AgentLaunch>;
  /**
   * Resolves once the started process serves; `onLine` delivers each line it prints on stdout and
   * stderr. Rejects (or the supervisor's timeout fires) when it cannot become ready.
   */
  ready(child: ChildProcess, onLine: (listener: (line: string) => void) => void, signal: AbortSignal): Promise<AgentReady>;
}

export interface AgentSupervisorOptions {
  launcher: AgentLauncher;
  /** The agent's memory cgroup; null = emulated OOM by the RSS watchdog. */
  cgroup: Cgroup | null;
  limitBytes: number;
  cpu: { mode: 'cgroup' | 'nice' | 'none'; nice: number };
  logFile: string;
  startTimeoutMs: number;
  backoff: BackoffOptions;
  /** Events for the samples file (agent-start, agent-ready, agent-exit, oom-kill, agent-restart). */
  event(type: EventSample['type'], detail?: string): void;
  /** Every death that was not a stop the runner asked for, as it happens. */
  onDeath?(verdict: DeathVerdict): void;
  /** Aborts a start or restart that is still waiting (the run was interrupted). */
  signal?: AbortSignal;
}

export class AgentSupervisor {
  readonly #opts: AgentSupervisorOptions;
  readonly #backoff: RestartBackoff;
  readonly #log: WriteStream;
  #child: ChildProcess | null = null;
  #ready: AgentReady | null = null;
  #stopping = false;
  #watchdogKilled = false;
  #faultSignal: NodeJS.Signals | null = null;
  #watchdog: NodeJS.Timeout | null = null;
  #restartTimer: NodeJS.Timeout | null = null;
  #downSince: number | null = null;
  #downtimeMs = 0;
  #oomKills = 0;
  #deaths: DeathVerdict[] = [];
  #startedAt = 0;
  #restarting: Promise<void> | null = null;
  #restartsDone = 0;

  constructor(opts: AgentSupervisorOptions) {
    this.#opts = opts;
    this.#backoff = new RestartBackoff(opts.backoff);
    this.#log = createWriteStream(opts.logFile, { flags: 'a' });
  }

  pid(): number | null {
    return this.#child && isRunning(this.#child) && this.#ready ? (this.#child.pid ?? null) : null;
  }

  metricsUrl(): string | null {
    return this.pid() !== null ? (this.#ready?.metrics ?? null) : null;
  }

  /** Restarts performed: the agent was started again (a restart still waiting in its back-off is not one). */
  get restarts(): number {
    return this.#restartsDone;
  }

  /** The process currently running, ready or not (for faults that signal it). */
  child(): ChildProcess | null {
    return this.#child && isRunning(this.#child) ? this.#child : null;
  }

  get oomKills(): number {
    return this.#oomKills;
  }

  get deaths(): readonly DeathVerdict[] {
    return this.#deaths;
  }

  /** Downtime so far, counting a current outage up to now. */
  downtimeMs(now = Date.now()): number {
    return this.#downtimeMs + (this.#downSince !== null ? now - this.#downSince : 0);
  }

  /** Starts the agent and waits until it is ready; throws when it does not come up. */
  async start(): Promise<AgentReady> {
    return this.#spawn();
  }

  async #spawn(): Promise<AgentReady> {
    const o = this.#opts;
    const signal = o.signal ?? new AbortController().signal;
    if (signal.aborted) throw new ChildProcessError('the agent was not started: the run was interrupted');
    const launch = await o.launcher.prepare();
    const oomBefore = o.cgroup ? o.cgroup.readMemory().oomKills : null;
    this.#watchdogKilled = false;
    this.#faultSignal = null;
    this.#ready = null;
    // Own process group: a terminal's Ctrl-C reaches the runner, which then stops the agent itself.
    // The IPC channel lets a Node agent notice its owner's death; other agents ignore fd 3. Output
    // goes through pipes the runner drains into agent.log: page cache is charged to the cgroup of
    // the process that writes, so the log's pages are the runner's, not the agent cgroup's.
    const child = spawnInCgroup(o.cgroup, launch.file, launch.args, {
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      detached: true,
      env: launch.env ?? process.env,
      ...(launch.cwd ? { cwd: launch.cwd } : {}),
    });
    this.#child = child;
    this.#startedAt = Date.now();
    o.event('agent-start', `pid ${child.pid}`);
    if (o.cpu.mode === 'nice' && child.pid) {
      try {
        setPriority(child.pid, o.cpu.nice);
      } catch (err) {
        this.#log.write(`attestorm: cannot set nice ${o.cpu.nice}: ${(err as Error).message}\n`);
      }
    }
    const listeners: Array<(line: string) => void> = [];
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => {
        this.#log.write(`${line}\n`);
        for (const l of listeners) l(line);
      });
    }
    const startAbort = new AbortController();
    const onAbort = () => startAbort.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    const readyP = new Promise<AgentReady>((resolve, reject) => {
      child.once('exit', (code, sig) => reject(new ChildProcessError(`the agent exited before it was ready (${sig ?? `code ${code}`}); see ${o.logFile}`)));
      child.once('error', (err) => reject(new ChildProcessError(`cannot start the agent (${launch.file}): ${err.message}`)));
      startAbort.signal.addEventListener('abort', () => reject(new ChildProcessError('the agent start was abandoned: the run was interrupted')), {
        once: true,
      });
      o.launcher.ready(child, (l) => listeners.push(l), startAbort.signal).then(resolve, reject);
    });
    child.once('exit', (code, signal) => this.#onExit(child, code, signal, oomBefore));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new TimeoutError(`the agent was not ready within ${o.startTimeoutMs} ms; see ${o.logFile}`)), o.startTimeoutMs);
    });
    try {
      const ready = await Promise.race([readyP, timeout]);
      this.#ready = ready;
      if (this.#downSince !== null) {
        this.#downtimeMs += Date.now() - this.#downSince;
        this.#downSince = null;
      }
      o.event('agent-ready', `pid ${ready.pid}`);
      if (!o.cgroup) this.#startWatchdog(child);
      return ready;
    } catch (err) {
      if (isRunning(child)) await stopChild(child, 1000);
      throw err;
    } finally {
      clearTimeout(timer);
      startAbort.abort();
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** No cgroup: enforce the limit on RSS ourselves, as the kernel would, and say so in the results. */
  #startWatchdog(child: ChildProcess): void {
    this.#watchdog = setInterval(() => {
      if (!child.pid || !isRunning(child)) return;
      const m = readProcessMemory(child.pid);
      if (m && m.rssBytes > this.#opts.limitBytes) {
        this.#watchdogKilled = true;
        child.kill('SIGKILL');
      }
    }, 50);
    this.#watchdog.unref();
  }

  /** The cgroup's OOM counter; null without a cgroup or when it cannot be read (the exit is then judged by its signal). */
  #oomKillsNow(): number | null {
    const cg = this.#opts.cgroup;
    if (!cg) return null;
    try {
      return cg.readMemory().oomKills;
    } catch (err) {
      this.#opts.event('note', `the OOM counter could not be read after the agent exited: ${(err as Error).message}`);
      return null;
    }
  }

  #onExit(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null, oomBefore: number | null): void {
    if (this.#watchdog) clearInterval(this.#watchdog);
    this.#watchdog = null;
    const o = this.#opts;
    const verdict = judgeExit({
      code,
      signal,
      stopRequested: this.#stopping,
      watchdogKilled: this.#watchdogKilled,
      faultSignal: this.#faultSignal,
      oomKillsBefore: oomBefore,
      oomKillsAfter: this.#oomKillsNow(),
    });
    const wasReady = this.#ready !== null && this.#child === child;
    if (verdict.cause === 'stopped') {
      o.event('agent-exit', verdict.detail);
      return;
    }
    this.#deaths.push(verdict);
    o.onDeath?.(verdict);
    if (verdict.cause === 'oom-kill' || verdict.cause === 'emulated-oom') {
      this.#oomKills += Math.max(1, verdict.kernelOomKills);
      o.event('oom-kill', verdict.detail);
    } else {
      o.event('agent-exit', verdict.detail);
    }
    // A death before the ready line is the start's failure, handled by #spawn's caller.
    if (!wasReady || this.#stopping) return;
    this.#ready = null;
    this.#downSince ??= Date.now();
    this.#scheduleRestart(Date.now() - this.#startedAt);
  }

  #scheduleRestart(ranMs: number): void {
    if (this.#stopping) return;
    const delay = this.#backoff.nextDelay(ranMs);
    this.#opts.event('agent-restart', `restart ${this.#backoff.restarts} in ${delay} ms`);
    this.#restartTimer = setTimeout(() => {
      this.#restartTimer = null;
      if (this.#stopping) return;
      this.#restartsDone++;
      this.#restarting = this.#spawn().then(
        () => undefined,
        (err: Error) => {
          // A restart that fails is another crash of the loop: back off again.
          this.#opts.event('note', `restart failed: ${err.message}`);
          this.#scheduleRestart(Date.now() - this.#startedAt);
        },
      );
    }, delay);
  }

  /** A fault's kill: the death is recorded as such (not as an OOM kill) and restarted with the back-off. */
  kill(signal: 'SIGKILL' | 'SIGTERM'): void {
    const child = this.#child;
    if (!child || !isRunning(child)) return;
    this.#faultSignal = signal;
    child.kill(signal);
  }

  /** Stops the agent (SIGTERM, SIGKILL after a grace period) and any pending restart. Idempotent. */
  async stop(graceMs = 3000): Promise<void> {
    this.#stopping = true;
    if (this.#restartTimer) clearTimeout(this.#restartTimer);
    this.#restartTimer = null;
    if (this.#restarting) await this.#restarting.catch(() => {});
    const child = this.#child;
    if (child && isRunning(child)) {
      await stopChild(child, graceMs);
    } else if (child) {
      await exited(child);
    }
    if (this.#watchdog) clearInterval(this.#watchdog);
    await new Promise<void>((r) => this.#log.end(r));
  }
}
