// The agent supervisor with the real reference agent: without a cgroup the RSS watchdog enforces the
// limit (emulated OOM), the agent is restarted with back-off, downtime is measured, nothing is left.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentSupervisor, referenceLauncher } from '../../src/targets/index.js';
import { bundleEntry, PROJECT_ROOT } from '../../src/util/index.js';

const dir = mkdtempSync(join(tmpdir(), 'attestorm-sup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('agent supervisor', () => {
  it('emulated OOM: the watchdog kills the agent above its limit, it is restarted with back-off, downtime counted', async () => {
    const bundle = await bundleEntry(join(PROJECT_ROOT, 'src/targets/agent-entry.ts'));
    const configFile = join(dir, 'agent.yaml');
    writeFileSync(configFile, `socket: ${join(dir, 'a.sock')}\nattestors: [unix]\nmetrics: 127.0.0.1:0\n`);
    const events: string[] = [];
    const sup = new AgentSupervisor({
      launcher: referenceLauncher(bundle, configFile),
      cgroup: null,
      // Below any Node process's RSS: the first watchdog reading after ready kills it.
      limitBytes: 8 * 2 ** 20,
      cpu: { mode: 'none', nice: 0 },
      logFile: join(dir, 'agent.log'),
      startTimeoutMs: 60_000,
      backoff: { initialMs: 300, maxMs: 600, resetAfterMs: 600_000 },
      event: (type, detail) => events.push(`${type}${detail ? `: ${detail}` : ''}`),
    });
    const ready = await sup.start();
    expect(ready.pid).toBeGreaterThan(0);
    expect(ready.metrics).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const deadline = Date.now() + 60_000;
    // restarts counts restarts performed, not scheduled: wait for the second one to have started.
    while (sup.restarts < 2 && Date.now() < deadline) await sleep(100);
    await sup.stop();
    expect(sup.restarts).toBeGreaterThanOrEqual(2);
    expect(sup.oomKills).toBeGreaterThanOrEqual(2);
    expect(sup.deaths.every((d) => d.cause === 'emulated-oom')).toBe(true);
    expect(events.filter((e) => e.startsWith('oom-kill: RSS watchdog SIGKILL'))).not.toHaveLength(0);
    // The second restart waited twice the first back-off.
    expect(events.filter((e) => e.startsWith('agent-restart'))).toEqual(
      expect.arrayContaining(['agent-restart: restart 1 in 300 ms', 'agent-restart: restart 2 in 600 ms']),
    );
    expect(sup.downtimeMs()).toBeGreaterThan(300);
    expect(sup.pid()).toBeNull();
    const ps = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' }).split('\n');
    expect(ps.filter((l) => l.includes(configFile))).toEqual([]);
    expect(readFileSync(join(dir, 'agent.log'), 'utf8')).toContain('"event":"ready"');
  });
});
