// Tells an OOM kill from any other death of the agent: the kernel's oom_kill counter of its cgroup
// going up is proof; a SIGKILL exit nobody asked for, inside a memory-limited cgroup, counts too
// when the counter lags (it is read after the exit).

export type DeathCause = 'oom-kill' | 'emulated-oom' | 'fault-kill' | 'signal' | 'exit' | 'stopped';

export interface DeathVerdict {
  cause: DeathCause;
  /** New kernel OOM kills attributed to this death (0 for emulated or non-OOM deaths). */
  kernelOomKills: number;
  detail: string;
}

export interface ExitFacts {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The runner itself was stopping the agent (end of placement, interrupt). */
  stopRequested: boolean;
  /** The RSS watchdog killed it (no cgroup available). */
  watchdogKilled: boolean;
  /** A scheduled fault (agent-kill) sent this signal. */
  faultSignal?: NodeJS.Signals | null;
  /** oom_kill counter of the agent's cgroup before it started and after it exited; null without a cgroup. */
  oomKillsBefore: number | null;
  oomKillsAfter: number | null;
}

export function judgeExit(f: ExitFacts): DeathVerdict {
  const kernel = f.oomKillsBefore !== null && f.oomKillsAfter !== null ? Math.max(0, f.oomKillsAfter - f.oomKillsBefore) : 0;
  const how = f.signal ? `signal ${f.signal}` : `exit code ${f.code}`;
  if (kernel > 0) return { cause: 'oom-kill', kernelOomKills: kernel, detail: `kernel OOM kill (oom_kill +${kernel}), ${how}` };
  if (f.watchdogKilled) return { cause: 'emulated-oom', kernelOomKills: 0, detail: `RSS watchdog SIGKILL at the memory limit, ${how}` };
  if (f.stopRequested) return { cause: 'stopped', kernelOomKills: 0, detail: `stopped by the runner, ${how}` };
  if (f.faultSignal) return { cause: 'fault-kill', kernelOomKills: 0, detail: `killed by a fault (agent-kill ${f.faultSignal}), ${how}` };
  // The kernel's counter and the exit can race; a SIGKILL we did not send in a memory-limited
  // cgroup is the OOM killer in practice.
  if (f.signal === 'SIGKILL' && f.oomKillsBefore !== null) {
    return { cause: 'oom-kill', kernelOomKills: 0, detail: 'SIGKILL not sent by the runner inside the memory cgroup (OOM killer; counter not yet updated)' };
  }
  if (f.signal) return { cause: 'signal', kernelOomKills: 0, detail: `died of ${how}` };
  return { cause: 'exit', kernelOomKills: 0, detail: `exited with code ${f.code}` };
}
