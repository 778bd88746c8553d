// The whole chain on the real reference agent: the runner's AgentSupervisor keeps it in a real
// memory + cpu + freezer cgroup, a small bystander loop makes real calls, and the FaultScheduler
// throttles, kills, freezes and squeezes it on schedule. The supervisor sees the kill and the
// kernel's OOM kill and restarts the agent; recovery figures come from real probes.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Cgroup, detectCgroupHost, removeIfEmpty } from '../../src/cgroup/index.js';
import { FaultScheduler, parseFaults, probeAgentOnce, waitAgentAnswers, type FaultEvent, type FaultTarget } from '../../src/fault/index.js';
import { AgentSupervisor, referenceLauncher } from '../../src/targets/index.js';
import { bundleEntry, PROJECT_ROOT } from '../../src/util/index.js';
import { skipNote } from '../support/skip-note.js';

const { host, reason } = detectCgroupHost();
if (!host) skipNote('every test of real-agent.slow.test.ts', reason);
const dir = mkdtempSync(join(tmpdir(), 'attestorm-chaos-'));
const root = `attestorm-faultagent-${process.pid}`;
const MiB = 2 ** 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  if (host) for (const base of [host.memoryBase, host.cpuBase, host.freezerBase]) if (base) removeIfEmpty(join(base, root));
});

describe.skipIf(!host)(`faults on the real agent (${reason})`, () => {
  it('throttle, kill, pause and squeeze on schedule; the supervisor restarts it; recovery measured', async () => {
    const bundle = await bundleEntry(join(PROJECT_ROOT, 'src/targets/agent-entry.ts'));
    const socket = join(dir, 'agent.sock');
    const configFile = join(dir, 'agent.yaml');
    // Every attestation holds 32 MiB (touched page by page) while it runs: whatever limit the squeeze
    // sets (16 MiB, or on v1 the usage at its start), the first bystander call during it must pass
    // the limit with nothing to reclaim, so the kernel's OOM kill is what the squeeze guarantees,
    // not what the agent's own allocations happened to reach in 2 s (once they did not: 0 kills).
    writeFileSync(configFile, `socket: ${socket}\nattestors: [unix]\nmetrics: 127.0.0.1:0\nmodel: { attestationWorkingSet: 32Mi }\n`);
    const cg = Cgroup.create(host!, `${root}/agent`, { cpu: true, freezer: true });
    const limit = 256 * MiB;
    cg.setMemoryLimit(limit);
    const supervisorEvents: string[] = [];
    const sup = new AgentSupervisor({
      launcher: referenceLauncher(bundle, configFile),
      cgroup: cg,
      limitBytes: limit,
      cpu: { mode: 'none', nice: 0 },
      logFile: join(dir, 'agent.log'),
      startTimeoutMs: 60_000,
      backoff: { initialMs: 200, maxMs: 400, resetAfterMs: 600_000 },
      event: (type, detail) => supervisorEvents.push(`${type}${detail ? `: ${detail}` : ''}`),
    });
    const events: FaultEvent[] = [];
    let sched: FaultScheduler | null = null;
    let bystanding = true;
    try {
      await sup.start();
      const target: FaultTarget = {
        socket,
        agentPid: () => sup.pid(),
        agentCgroup: cg,
        kubelet: null,
        waitAgentAnswers: (signal) => waitAgentAnswers(socket, signal, { deadlineMs: 1000 }),
      };
      const faults = parseFaults([
        { at: 0, for: '1s', action: 'cpu-throttle', cores: 0.2 },
        { at: '1500ms', action: 'agent-kill' },
        { at: '4s', for: '1s', action: 'agent-pause' },
        { at: '6s', for: '2s', action: 'memory-squeeze', to: '16Mi' },
      ]);
      const loadStart = Date.now();
      sched = new FaultScheduler({ faults, target, loadStart, onEvent: (e) => events.push(e) });
      sched.start();
      // A bystander: one real call every 100 ms, counted in the second it completed in (t = the
      // second's end) and fed to the scheduler once that second is over.
      const bystander = (async () => {
        const seconds = new Map<number, { calls: number; ok: number }>();
        let fed = 0;
        while (bystanding) {
          const ok = await probeAgentOnce(socket, 500);
          const t = Math.ceil((Date.now() - loadStart) / 1000) * 1000;
          for (; fed + 1000 < t; fed += 1000) sched!.bystanderSecond({ t: fed + 1000, ...(seconds.get(fed + 1000) ?? { calls: 0, ok: 0 }) });
          const s = seconds.get(t) ?? { calls: 0, ok: 0 };
          s.calls++;
          if (ok) s.ok++;
          seconds.set(t, s);
          await sleep(100);
        }
      })();
      // Past the squeeze's end, then long enough for the restart back-off and the recovery probes.
      const deadline = Date.now() + 30_000;
      while (Date.now() - loadStart < 11_000 || (sup.pid() === null && Date.now() < deadline)) await sleep(200);
      await sleep(1500);
      bystanding = false;
      await bystander;
      const records = await sched.stop();

      expect(events.map((e) => `${e.type} ${e.action}`)).toEqual([
        'fault-start cpu-throttle',
        'fault-end cpu-throttle',
        'fault-start agent-kill',
        'fault-end agent-kill',
        'fault-start agent-pause',
        'fault-end agent-pause',
        'fault-start memory-squeeze',
        'fault-end memory-squeeze',
      ]);
      expect(records.every((r) => r.error === undefined)).toBe(true);
      // Each fault was over and the agent answered again before the end.
      for (const r of records) expect(r.recovery.agentReadyMs, `${r.action}: ${r.detail}`).not.toBeNull();
      // The kill needed a restart (back-off 200 ms, then the agent's start-up): slower than the throttle's end.
      expect(records[1]!.recovery.agentReadyMs!).toBeGreaterThan(records[0]!.recovery.agentReadyMs!);
      expect(records[1]!.detail).toMatch(/^sent SIGKILL to the agent \(pid \d+\), gone after \d+ ms/);
      expect(records[2]!.detail).toMatch(/^froze the agent's cgroup \(v1 freezer|cgroup\.freeze/);
      // The squeeze OOM-killed the agent: the kernel's counter, the supervisor's verdict.
      expect(records[3]!.detail).toMatch(/memory limit restored to 256\.0 MiB; [1-9]\d* OOM kills? during the squeeze/);
      expect(supervisorEvents.some((e) => e.startsWith('oom-kill'))).toBe(true);
      expect(sup.restarts).toBeGreaterThanOrEqual(2);
      expect(sup.oomKills).toBeGreaterThanOrEqual(1);
      // Bystander figures exist for every fault, and the pause and squeeze cost calls.
      for (const r of records) expect(r.recovery.bystanderOkMs, r.action).not.toBeNull();
      expect(records[2]!.recovery.callsLost).toBeGreaterThan(0);
      expect(records[3]!.recovery.callsLost).toBeGreaterThan(0);
      // Everything undone: limit, quota, freezer.
      expect(cg.readMemory().limitBytes).toBe(limit);
      expect(cg.readCpuQuota()).toBeNull();
      expect(cg.freezerState()).toBe('THAWED');
      process.stdout.write(
        `faults on the real agent: ${JSON.stringify(records.map((r) => ({ action: r.action, detail: r.detail, startedAtMs: r.startedAtMs, endedAtMs: r.endedAtMs, ...r.recovery })))}\n`,
      );
    } finally {
      bystanding = false;
      await sched?.stop();
      await sup.stop();
      await cg.remove();
    }
    const ps = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' }).split('\n');
    expect(ps.filter((l) => l.includes(configFile))).toEqual([]);
  });
});
