// An agent someone else runs (a real SPIRE agent on a node, a debug build): stormed, sampled and
// watched for deaths — through its cgroup's oom_kill counter and its PID disappearing — never restarted.
import { existsSync } from 'node:fs';
import type { Cgroup } from '../../cgroup/index.js';
import { RunError } from '../../errors.js';
import { openExistingCgroup, type Sampler } from '../../sample/index.js';
import { memorySampler } from '../memory-sampler.js';
import type { AgentTarget, TargetContext } from '../target.js';
import type { ExternalAgent } from './schema.js';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** The first PID in a cgroup (an agent restarted by its own supervisor gets a new one). */
function firstPid(cg: Cgroup): number | null {
  const pids = cg.pids();
  return pids.length ? pids[0]! : null;
}

export function externalTarget(agent: ExternalAgent, ctx: TargetContext): AgentTarget {
  let cgroup: Cgroup | null = null;
  let pid: number | null = agent.pid ?? null;
  let oomBase: number | null = null;
  let oomKills = 0;
  let deaths = 0;
  let restarts = 0;
  let downSince: number | null = null;
  let downtime = 0;
  let watch: NodeJS.Timeout | null = null;
  let readFailure: string | null = null;
  const limitBytes = () => (cgroup ? cgroup.readMemory().limitBytes : null) ?? agent.memoryLimit ?? 0;

  // Every 100 ms: a rise of the cgroup's oom_kill counter is an OOM kill; a PID that vanished is a
  // death; with only a cgroup, a new PID in it is the agent restarted by whoever owns it.
  const check = () => {
    if (cgroup && oomBase !== null) {
      let now = oomBase;
      try {
        now = cgroup.readMemory().oomKills;
        readFailure = null;
      } catch (err) {
        // Said once per failure streak: a missing counter is not "no OOM kill", it is "cannot tell".
        if (readFailure === null) ctx.event('note', `cannot read the external agent's OOM counter: ${(readFailure = (err as Error).message)}`);
      }
      if (now > oomBase) {
        const n = now - oomBase;
        oomBase = now;
        oomKills += n;
        ctx.event('oom-kill', `kernel OOM kill of the external agent (oom_kill +${n})`);
        ctx.onDeath({ cause: 'oom-kill', kernelOomKills: n, detail: `kernel OOM kill (oom_kill +${n}) in ${agent.cgroup}` });
      }
    }
    if (pid !== null && !alive(pid)) {
      deaths++;
      ctx.event('agent-exit', `external agent pid ${pid} is gone`);
      if (!cgroup) ctx.onDeath({ cause: 'exit', kernelOomKills: 0, detail: `pid ${pid} disappeared` });
      pid = null;
      downSince ??= Date.now();
    }
    if (pid === null && cgroup) {
      const next = firstPid(cgroup);
      if (next !== null) {
        if (deaths > 0) {
          restarts++;
          ctx.event('agent-restart', `external agent back as pid ${next}`);
        }
        pid = next;
        if (downSince !== null) downtime += Date.now() - downSince;
        downSince = null;
      }
    }
  };

  return {
    socket: agent.socket,
    get limitBytes() {
      return limitBytes();
    },
    async start() {
      if (agent.cgroup) {
        cgroup = openExistingCgroup(agent.cgroup);
        if (!cgroup)
          throw new RunError(
            `variant ${ctx.variant}: agent.cgroup ${agent.cgroup} is not a memory cgroup directory (no memory.current or memory.usage_in_bytes)`,
          );
        oomBase = cgroup.readMemory().oomKills;
        pid ??= firstPid(cgroup);
      }
      if (agent.pid !== undefined && !alive(agent.pid)) throw new RunError(`variant ${ctx.variant}: agent.pid ${agent.pid} is not running`);
      if (!existsSync(agent.socket)) throw new RunError(`variant ${ctx.variant}: agent.socket ${agent.socket} does not exist`);
      watch = setInterval(check, 100);
      watch.unref();
    },
    samplers(): Sampler[] {
      return [memorySampler(cgroup, () => pid, limitBytes())];
    },
    cgroup: () => cgroup,
    pid: () => pid,
    get oomKills() {
      return oomKills;
    },
    get restarts() {
      return restarts;
    },
    downtimeMs: () => downtime + (downSince !== null ? Date.now() - downSince : 0),
    // A cgroup we do not own is never reset: its high-water mark may predate the run.
    peakBytes: () => null,
    describe: () => ({ kind: 'external', placement: null, key: null, binary: agent.socket }),
    async stop() {
      if (watch) {
        check();
        clearInterval(watch);
        watch = null;
      }
    },
  };
}
