// spire-agent under a supervisor: before every start a fresh join token (tokens are single use and
// the in-memory key manager re-attests on every start) and an empty data dir; ready when /ready
// answers 200 and SPIRE has announced every configured rate limit.
import type { ChildProcess } from 'node:child_process';
import type { LimitedPlacement } from '../contract/index.js';
import { ChildProcessError, RunError } from '../errors.js';
import { isRunning, sleep } from '../util/index.js';
import { joinTokenRefusal, limiterAnnouncement, limiterNotLoggedError, placementMismatch, unannouncedLimits, type SpireAgentPlan } from './agent.js';
import { isReady } from './health.js';
import { quoteLog } from './log-tail.js';
import type { SpireServer } from './server.js';

/** One start: what to exec (the supervisor's AgentLaunch shape). */
export interface SpireLaunch {
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

export interface SpireReady {
  pid: number;
  metrics: string | null;
}

export interface SpireAgentLauncher {
  prepare(): Promise<SpireLaunch>;
  ready(child: ChildProcess, onLine: (listener: (line: string) => void) => void, signal: AbortSignal): Promise<SpireReady>;
  /** Join tokens issued so far, one per start. */
  readonly tokens: readonly string[];
}

// SPIRE logs its limiter lines while building its endpoints, before /ready: a short grace covers
// a log line still in a pipe.
const ANNOUNCE_GRACE_MS = 2000;
const POLL_MS = 100;

export function spireAgentLauncher(plan: SpireAgentPlan, server: SpireServer, logFile: string): SpireAgentLauncher {
  const tokens: string[] = [];
  return {
    tokens,
    async prepare() {
      plan.resetDataDir();
      const token = await server.joinToken();
      tokens.push(token);
      const { command, args, env } = plan.command(token);
      return { file: command, args, env };
    },
    async ready(child, onLine, signal) {
      const announced = new Map<string, number>();
      const placements = new Map<string, LimitedPlacement>();
      let refused: string | null = null;
      onLine((line) => {
        const a = limiterAnnouncement(line);
        if (a) {
          announced.set(a.method, a.limit);
          placements.set(a.method, a.placement);
        }
        refused ??= joinTokenRefusal(line);
      });
      // Exits and timeouts are the supervisor's to report; here only "not yet".
      while (!signal.aborted && isRunning(child) && refused === null && !(await isReady(plan.healthPort))) await sleep(POLL_MS, signal);
      if (refused !== null) throw new ChildProcessError(`spire-agent cannot become ready: ${refused}.${quoteLog(logFile)}`);
      const until = Date.now() + ANNOUNCE_GRACE_MS;
      while (!signal.aborted && isRunning(child) && unannouncedLimits(plan, announced).length > 0 && Date.now() < until) await sleep(POLL_MS, signal);
      if (signal.aborted) throw new RunError('spire-agent start was interrupted');
      if (!isRunning(child))
        throw new ChildProcessError(`spire-agent exited before it was ready (${child.signalCode ?? `code ${child.exitCode}`}).${quoteLog(logFile)}`);
      const missing = unannouncedLimits(plan, announced);
      if (missing.length > 0) throw limiterNotLoggedError(plan, missing, logFile);
      // A patched build is only what it claims when its own log says where its limiter sits.
      const mismatch = placementMismatch(plan, placements);
      if (mismatch) throw new RunError(`spire-agent is not the build the variant names: ${mismatch}.${quoteLog(logFile)}`);
      return { pid: child.pid ?? 0, metrics: plan.metricsUrl };
    },
  };
}
