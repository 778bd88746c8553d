// CPU isolation: CPU lists, the scenario's isolation refused for CPUs the machine lacks, and real
// cpuset cgroups: a process spawned into one really runs on its CPUs only (the kernel says so in
// /proc/<pid>/status), the runner moves in and back out, and nothing is left behind.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  Cgroup,
  cpusAllowed,
  createCpuset,
  detectCgroupHost,
  effectiveCpus,
  formatCpuList,
  parseCpuList,
  removeIfEmpty,
  removeTree,
  spawnInCgroup,
} from '../../src/cgroup/index.js';
import { ConfigError } from '../../src/errors.js';
import { podStartTimeoutMs } from '../../src/load/index.js';
import { newRunId } from '../../src/sandbox/index.js';
import { isolateRunner, parseScenario, planIsolation } from '../../src/scenario/index.js';

const { host, reason } = detectCgroupHost();
const cpusetBase = host?.cpusetBase ?? null;
const baseCpus = cpusetBase ? effectiveCpus(cpusetBase) : [];
const skipReal = !cpusetBase
  ? `no writable cpuset hierarchy (${reason})`
  : baseCpus.length < 2
    ? `only CPUs ${formatCpuList(baseCpus)} in our cpuset: isolation needs two`
    : null;
if (skipReal) console.log(`skipping real cpuset tests: ${skipReal}`);

const scenario = (isolation: Record<string, unknown>) => parseScenario({ name: 'iso', placements: ['disabled'], isolation }).scenario;

describe('CPU lists', () => {
  it('parses and formats the kernel form', () => {
    expect(parseCpuList('0-2,5')).toEqual([0, 1, 2, 5]);
    expect(parseCpuList(' 1 ')).toEqual([1]);
    expect(parseCpuList('')).toEqual([]);
    expect(parseCpuList('2-1')).toBeNull();
    expect(parseCpuList('a')).toBeNull();
    expect(formatCpuList([5, 0, 1, 2, 1])).toBe('0-2,5');
  });
});

describe('scenario isolation', () => {
  const fakeHost = { version: 'v1' as const, memoryBase: '/nonexistent', cpuBase: null, cpusetBase: null };

  it('the schema refuses a malformed CPU list and non-reference agents', () => {
    expect(() => scenario({ agentCpus: 'one' })).toThrow(/isolation\.agentCpus.*CPU list/);
    expect(() => parseScenario({ name: 'iso', target: { socket: '/tmp/x.sock' }, isolation: { agentCpus: '1' } })).toThrow(
      /isolation.*reference agents only.*external/,
    );
  });

  it('refuses CPUs the machine lacks, naming the key and what the machine has', () => {
    const err = (() => {
      try {
        planIsolation(scenario({ agentCpus: '4095' }), fakeHost, null);
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/isolation\.agentCpus asks for CPU 4095, but this machine offers CPUs \d/);
    expect(() => planIsolation(scenario({ agentCpus: '0', otherCpus: '0' }), fakeHost, null)).toThrow(/must not overlap.*CPU 0/);
  });

  it('refuses to leave nothing for the pods', () => {
    const all = `0-${cpus().length - 1}`;
    expect(() => planIsolation(scenario({ agentCpus: all }), fakeHost, null)).toThrow(/leaves no CPU for the pods/);
  });

  it('records why it could not be applied', () => {
    const { plan, record } = planIsolation(scenario({ agentCpus: '0' }), fakeHost, 'variants run in a cluster');
    expect(plan).toBeNull();
    expect(record).toMatchObject({ mode: 'cpuset', agentCpus: '0', applied: false, detail: 'not applied: variants run in a cluster' });
    expect(planIsolation(scenario({ agentCpus: '0' }), fakeHost, null).record?.detail).toMatch(/not applied: no writable cpuset hierarchy/);
  });
});

describe('cpusets on cgroup v2 (a fixture tree)', () => {
  /** A v2 tree whose levels offer the controllers given (what the kernel writes in cgroup.controllers). */
  function tree(levels: Record<string, string>): string {
    const root = mkdtempSync(join(tmpdir(), 'attestorm-cpuset-v2-'));
    for (const [rel, controllers] of Object.entries(levels)) {
      mkdirSync(join(root, rel), { recursive: true });
      writeFileSync(join(root, rel, 'cgroup.controllers'), controllers);
      writeFileSync(join(root, rel, 'cgroup.subtree_control'), '');
    }
    return root;
  }

  it('every level above the pinned cgroup delegates cpuset to its children first; only the leaf gets CPUs', () => {
    const root = tree({ '.': 'cpuset cpu memory', attestorm: 'cpuset cpu memory', 'attestorm/r': 'cpuset cpu memory' });
    try {
      const dir = createCpuset('v2', root, 'attestorm/r/harness', '0');
      expect(dir).toBe(join(root, 'attestorm/r/harness'));
      for (const level of ['.', 'attestorm', 'attestorm/r']) expect(readFileSync(join(root, level, 'cgroup.subtree_control'), 'utf8'), level).toBe('+cpuset');
      expect(readFileSync(join(dir, 'cpuset.cpus'), 'utf8')).toBe('0');
      expect(existsSync(join(root, 'attestorm/r/cpuset.cpus')), 'levels above the leaf keep their parent’s CPUs').toBe(false);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('a level that cannot delegate cpuset is named, before anything is pinned', () => {
    const root = tree({ '.': 'cpuset cpu memory', attestorm: 'cpu memory' });
    try {
      expect(() => createCpuset('v2', root, 'attestorm/r/harness', '0')).toThrow(
        `${join(root, 'attestorm')} refused the cpuset controller (cpuset (not available))`,
      );
      expect(existsSync(join(root, 'attestorm/r/harness'))).toBe(false);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('pod start timeout', () => {
  it("scales with the workers per CPU the pods may use, a CPU quota's share of a core included", () => {
    expect(podStartTimeoutMs(100, 400, 2)).toBe(150_000);
    expect(podStartTimeoutMs(100, 400, 1)).toBe(270_000);
    expect(podStartTimeoutMs(96, 98, 1.2)).toBe(79_000);
    expect(podStartTimeoutMs(300, 1200, 1)).toBe(750_000);
  });
});

describe.skipIf(skipReal !== null)('real cpusets', () => {
  const runId = newRunId('cpuset-test');
  const agentCpu = String(baseCpus[baseCpus.length - 1]);
  const others = formatCpuList(baseCpus.slice(0, -1));
  afterAll(async () => {
    await removeTree(join(cpusetBase!, 'attestorm', runId));
    for (const base of [host!.memoryBase, host!.cpuBase, host!.freezerBase]) if (base) await removeTree(join(base, 'attestorm', runId));
    for (const base of [host!.memoryBase, host!.cpuBase, host!.freezerBase, cpusetBase]) if (base) removeIfEmpty(join(base, 'attestorm'));
  });

  it('a process spawned into a pinned cgroup runs on those CPUs only, and removal leaves nothing', async () => {
    const cg = Cgroup.create(host!, `attestorm/${runId}/agent`, { cpus: agentCpu });
    expect(cg.cpusetPath).toBe(join(cpusetBase!, 'attestorm', runId, 'agent'));
    const child = spawnInCgroup(cg, 'sleep', ['30'], { stdio: 'ignore' });
    await new Promise((r) => child.once('spawn', r));
    // The shell execs sleep after joining: wait until the exec happened.
    for (let i = 0; i < 100 && cpusAllowed(child.pid!) !== agentCpu; i++) await new Promise((r) => setTimeout(r, 20));
    expect(cpusAllowed(child.pid!)).toBe(agentCpu);
    expect(cg.pids()).toContain(child.pid);
    await cg.remove();
    expect(existsSync(cg.cpusetPath!)).toBe(false);
    expect(existsSync(cg.path)).toBe(false);
  });

  it('the runner moves onto the other CPUs, its children inherit them, and it moves back', async () => {
    const before = cpusAllowed('self');
    const undo = isolateRunner(host!, runId, { agentCpus: agentCpu, otherCpus: others });
    try {
      expect(cpusAllowed('self')).toBe(others);
      // What the pods' start timeout is scaled by: the CPUs left to the runner and its pods.
      expect(availableParallelism()).toBe(parseCpuList(others)!.length);
      const child = spawn('sleep', ['30'], { stdio: 'ignore' });
      await new Promise((r) => child.once('spawn', r));
      expect(cpusAllowed(child.pid!)).toBe(others);
      child.kill('SIGKILL');
    } finally {
      undo();
    }
    expect(cpusAllowed('self')).toBe(before);
    await removeTree(join(cpusetBase!, 'attestorm', runId, 'harness'));
  });
});
