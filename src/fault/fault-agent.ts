// Faults on the agent process and its cgroup: kill (the supervisor restarts it), pause (freezer, or
// SIGSTOP/SIGCONT), memory squeeze (lower the limit, then restore it) and CPU throttle (a CFS quota).
import { readFileSync } from 'node:fs';
import type { Cgroup } from '../cgroup/index.js';
import { formatMiB, sleep } from '../util/index.js';
import { FaultNotApplied, type FaultStarter } from './action.js';
import type { FaultTarget } from './fault-target.js';

/** How long agent-kill waits for the agent to die (a SIGTERM'd agent drains its calls first). */
const KILL_WAIT_MS = 10_000;

function pidOf(target: FaultTarget): number {
  const pid = target.agentPid();
  if (pid === null) throw new FaultNotApplied('the agent is down (no pid), e.g. restarting after an earlier fault');
  return pid;
}

function cgroupOf(target: FaultTarget, what: string): Cgroup {
  if (!target.agentCgroup) throw new FaultNotApplied(`the agent has no cgroup to ${what}`);
  return target.agentCgroup;
}

function signal(pid: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(pid, sig);
    return true;
  } catch {
    return false; // ESRCH: gone meanwhile.
  }
}

/** Alive and not a zombie (a dead child stays a zombie until its parent reaps it). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

export const agentKill: FaultStarter<'agent-kill'> = async (f, target) => {
  const pid = pidOf(target);
  const sentAt = Date.now();
  if (target.killAgent) target.killAgent(f.signal);
  else if (!signal(pid, f.signal)) throw new FaultNotApplied(`the agent (pid ${pid}) exited before the ${f.signal}`);
  // Recovery is measured from the death, not the signal: after SIGTERM the agent may drain for a while.
  while (alive(pid) && target.agentPid() === pid && Date.now() - sentAt < KILL_WAIT_MS) await sleep(20);
  const took = Date.now() - sentAt;
  const state = alive(pid) && target.agentPid() === pid ? `still running ${took} ms later` : `gone after ${took} ms`;
  return { detail: `sent ${f.signal} to the agent (pid ${pid}), ${state}; its supervisor restarts it` };
};

export const agentPause: FaultStarter<'agent-pause'> = async (_f, target) => {
  const cg = target.agentCgroup;
  if (cg?.canFreeze()) {
    try {
      await cg.freeze();
    } catch (err) {
      // Half frozen (FREEZING) must not outlive a fault that did not start.
      cg.thaw();
      throw err;
    }
    const how = cg.version === 'v1' ? 'v1 freezer' : 'cgroup.freeze';
    return {
      detail: `froze the agent's cgroup (${how}, ${cg.pids().length} processes)`,
      end: async () => {
        cg.thaw();
        return `thawed the agent's cgroup (${how})`;
      },
    };
  }
  const pid = pidOf(target);
  if (!signal(pid, 'SIGSTOP')) throw new FaultNotApplied(`the agent (pid ${pid}) exited before the SIGSTOP`);
  return {
    detail: `stopped the agent with SIGSTOP (pid ${pid}; no freezer cgroup)`,
    end: async () => (signal(pid, 'SIGCONT') ? `continued the agent with SIGCONT (pid ${pid})` : `the agent (pid ${pid}) had exited; nothing to continue`),
  };
};

const PAGE = 4096;

/**
 * Lowers the memory limit to `bytes`. v1 refuses (EBUSY) a limit below what the kernel cannot reclaim
 * (anonymous memory without swap): the limit is then set at the current usage, so the agent's
 * next allocations hit it and the kernel OOM-kills, as under node memory pressure. Returns the limit set.
 */
export function squeezeMemory(cg: Cgroup, bytes: number): number {
  try {
    cg.setMemoryLimit(bytes);
    return bytes;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EBUSY') throw err;
  }
  let lastErr: unknown;
  for (let attempt = 0; attempt < 10; attempt++) {
    const usage = cg.readMemory().usageBytes;
    const limit = Math.ceil(usage / PAGE) * PAGE + attempt * 64 * PAGE;
    try {
      cg.setMemoryLimit(Math.max(bytes, limit));
      return Math.max(bytes, limit);
    } catch (err) {
      lastErr = err;
      if ((err as NodeJS.ErrnoException).code !== 'EBUSY') throw err;
    }
  }
  throw new FaultNotApplied(`the kernel refused every limit near the usage: ${(lastErr as Error).message}`);
}

export const memorySqueeze: FaultStarter<'memory-squeeze'> = async (f, target) => {
  const cg = cgroupOf(target, 'squeeze');
  const before = cg.readMemory();
  const set = squeezeMemory(cg, f.to);
  const was = before.limitBytes === null ? 'unlimited' : formatMiB(before.limitBytes);
  const note =
    set === f.to
      ? ''
      : ` (asked ${formatMiB(f.to)}; v1 refuses a limit under memory it cannot reclaim, so it sits at the usage and the next allocations OOM-kill)`;
  return {
    detail: `memory limit ${was} → ${formatMiB(set)}, usage ${formatMiB(before.usageBytes)}${note}`,
    end: async () => {
      cg.restoreMemoryLimit(before.limitBytes);
      const kills = cg.readMemory().oomKills - before.oomKills;
      return `memory limit restored to ${was}; ${kills} OOM kill${kills === 1 ? '' : 's'} during the squeeze`;
    },
  };
};

export const cpuThrottle: FaultStarter<'cpu-throttle'> = async (f, target) => {
  const cg = cgroupOf(target, 'throttle');
  if (!cg.canLimitCpu()) throw new FaultNotApplied("the agent's cgroup has no CPU controller (v1: created without { cpu: true }; v2: cpu not delegated)");
  const before = cg.readCpuQuota();
  cg.setCpuQuota(f.cores);
  const was = before === null ? 'unlimited' : `${before} cores`;
  return {
    detail: `CPU quota ${was} → ${f.cores} cores`,
    end: async () => {
      cg.setCpuQuota(before);
      return `CPU quota restored to ${was}`;
    },
  };
};
