// The `faults` schema and faultProblems: every action's parameters parsed to ms and bytes, every
// wrong input a ConfigError naming the fault and the rule, and every fault a target cannot take named.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { builtinCapabilities, externalCapabilities, faultProblems, faultScheduleProblems, parseFaults, type Fault } from '../../src/fault/index.js';
import { configProblems } from '../support/config-problems.js';

const problems = (input: unknown): string[] => configProblems(() => parseFaults(input));

const MiB = 2 ** 20;

describe('faults schema', () => {
  it('parses every action with its parameters and defaults', () => {
    const faults = parseFaults([
      { at: '5s', action: 'agent-kill' },
      { at: '6s', action: 'agent-kill', signal: 'SIGTERM' },
      { at: '1s', for: '2s', action: 'agent-pause' },
      { at: '1s', for: '500ms', action: 'memory-squeeze', to: '48Mi' },
      { at: 2, for: 3, action: 'cpu-throttle', cores: 0.25 },
      { at: '0s', for: '10s', action: 'kubelet-latency', value: '2s' },
      { at: '0s', for: '10s', action: 'kubelet-errors', rate: 0.5 },
      { at: '10s', for: '5s', action: 'kubelet-down' },
      { at: '20s', for: '5s', action: 'kubelet-stall' },
      { at: '3s', action: 'pod-churn', count: 2 },
      { at: '3s', for: '4s', action: 'slow-clients', count: 100 },
      { at: '3s', for: '4s', action: 'burst', workers: 50 },
    ]);
    expect(faults[0]).toEqual({ action: 'agent-kill', at: 5000, signal: 'SIGKILL' });
    expect(faults[1]).toMatchObject({ signal: 'SIGTERM', at: 6000 });
    expect(faults[3]).toEqual({ action: 'memory-squeeze', at: 1000, for: 500, to: 48 * MiB });
    expect(faults[4]).toEqual({ action: 'cpu-throttle', at: 2000, for: 3000, cores: 0.25 });
    expect(faults[5]).toMatchObject({ value: 2000 });
    expect(faults.map((f) => f.action)).toHaveLength(12);
  });

  it('names unknown actions, unknown or bad parameters and bad durations', () => {
    expect(problems([{ at: '5s', action: 'agent-explode' }])).toEqual([
      expect.stringMatching(/^faults\[0\]\.action: must be one of agent-kill, .*burst, got "agent-explode"$/),
    ]);
    expect(problems([{ at: '5s', for: '1s', action: 'agent-pause', signal: 'SIGSTOP' }])).toEqual(['faults[0]: unknown key(s) signal']);
    expect(problems([{ at: '5s', action: 'agent-kill', signal: 'SIGHUP' }])[0]).toMatch(/^faults\[0\]\.signal: .*got "SIGHUP"$/);
    expect(problems([{ at: 'soon', for: '1s', action: 'kubelet-errors', rate: 2 }])).toEqual([
      'faults[0].at must be a duration like 500ms, 30s or 2m, got "soon"',
      expect.stringMatching(/^faults\[0\]\.rate: .*<=1, got 2$/),
    ]);
    expect(problems([{ for: '1s', action: 'burst', workers: 1 }])).toEqual(['faults[0].at: must be a duration since the load start, like 10s, got nothing']);
    expect(problems([{ at: '1s', for: '1s', action: 'memory-squeeze', to: '1Mi' }])).toEqual(['faults[0].to: must be at least 4Mi, got "1Mi"']);
    expect(problems({ at: '1s' })[0]).toMatch(/^faults: .*expected array/);
  });

  it('requires `for` on windowed actions and refuses it on instantaneous ones', () => {
    expect(problems([{ at: '5s', action: 'agent-pause' }])).toEqual([
      'faults[0] (agent-pause) needs `for`, how long the fault lasts (e.g. for: 5s), got nothing',
    ]);
    expect(problems([{ at: '5s', for: '2s', action: 'pod-churn', count: 1 }])).toEqual([
      'faults[0].for (pod-churn) takes no `for`: it happens at one instant, got "2s"',
    ]);
    expect(problems([{ at: '5s', for: 0, action: 'burst', workers: 1 }])).toEqual(['faults[0].for (burst) must last more than 0, got 0']);
  });

  it('refuses overlapping windows of the same action, and kubelet down during a stall', () => {
    expect(
      problems([
        { at: '10s', for: '10s', action: 'agent-pause' },
        { at: '2s', for: '3s', action: 'memory-squeeze', to: '64Mi' },
        { at: '15s', for: '10s', action: 'agent-pause' },
      ]),
    ).toEqual(['faults[2] (agent-pause) overlaps faults[0] (agent-pause): windows of the same action must not overlap, got 15s–25s and 10s–20s']);
    // Back to back is fine; down and stall at once is not.
    expect(
      parseFaults([
        { at: '1s', for: '1s', action: 'agent-pause' },
        { at: '2s', for: '1s', action: 'agent-pause' },
      ]),
    ).toHaveLength(2);
    expect(
      problems([
        { at: '1s', for: '5s', action: 'kubelet-down' },
        { at: '3s', for: '5s', action: 'kubelet-stall' },
      ]),
    ).toEqual([
      'faults[1] (kubelet-stall) overlaps faults[0] (kubelet-down): kubelet-down and kubelet-stall must not overlap (both own the listener), got 3s–8s and 1s–6s',
    ]);
    expect(
      problems([
        { at: '1s', action: 'agent-kill' },
        { at: '1s', action: 'agent-kill' },
      ])[0],
    ).toMatch(/^faults\[1\] \(agent-kill\) overlaps faults\[0\]/);
  });
});

describe('faultProblems', () => {
  const all: Fault[] = parseFaults([
    { at: '1s', action: 'agent-kill' },
    { at: '1s', for: '1s', action: 'agent-pause' },
    { at: '1s', for: '1s', action: 'memory-squeeze', to: '64Mi' },
    { at: '1s', for: '1s', action: 'cpu-throttle', cores: 0.5 },
    { at: '1s', for: '1s', action: 'kubelet-stall' },
    { at: '1s', for: '1s', action: 'slow-clients', count: 5 },
  ]);
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('a built-in agent with v1 memory, cpu and freezer hierarchies takes everything', () => {
    const caps = builtinCapabilities('pre', { version: 'v1', memoryBase: '/m', cpuBase: '/c', freezerBase: '/f' });
    expect(faultProblems(all, caps)).toEqual([]);
    // Without the cpu and freezer hierarchies: no throttle; pause falls back to SIGSTOP.
    expect(faultProblems(all, builtinCapabilities('pre', { version: 'v1', memoryBase: '/m', cpuBase: null }))).toEqual([
      "faults[3] (cpu-throttle): needs the agent's CPU cgroup (v1 cpu hierarchy or v2 cpu.max); variant 'pre' has none on this machine",
    ]);
  });

  it('a built-in agent without cgroups says why', () => {
    expect(faultProblems(all, builtinCapabilities('disabled', null, 'no writable cgroup memory hierarchy'))).toEqual([
      "faults[2] (memory-squeeze): needs the agent's memory cgroup; variant 'disabled' has none on this machine (no writable cgroup memory hierarchy)",
      "faults[3] (cpu-throttle): needs the agent's CPU cgroup (v1 cpu hierarchy or v2 cpu.max); variant 'disabled' has none on this machine (no writable cgroup memory hierarchy)",
    ]);
  });

  it('an external agent: only what its pid and cgroup allow', () => {
    expect(faultProblems(all, externalCapabilities('x', {}))).toEqual([
      "faults[0] (agent-kill): needs the agent's pid; variant 'x' is an external agent without one",
      "faults[1] (agent-pause): needs the agent's freezer cgroup or its pid (SIGSTOP); variant 'x' is an external agent without either",
      "faults[2] (memory-squeeze): needs the agent's memory cgroup; variant 'x' is an external agent without one",
      "faults[3] (cpu-throttle): needs the agent's CPU cgroup (v1 cpu hierarchy or v2 cpu.max); variant 'x' is an external agent without one",
    ]);
    // A v1 memory cgroup (memory.usage_in_bytes) and a pid: squeeze, kill and SIGSTOP, but no quota.
    const v1 = mkdtempSync(join(tmpdir(), 'attestorm-fault-cg-'));
    dirs.push(v1);
    writeFileSync(join(v1, 'memory.usage_in_bytes'), '0');
    expect(faultProblems(all, externalCapabilities('x', { pid: 123, cgroup: v1 }))).toEqual([
      "faults[3] (cpu-throttle): needs the agent's CPU cgroup (v1 cpu hierarchy or v2 cpu.max); variant 'x' is an external agent without one",
    ]);
    // A v2 cgroup with cpu.max and cgroup.freeze takes everything even without a pid, except the kill.
    const v2 = join(v1, 'v2');
    mkdirSync(v2);
    for (const f of ['memory.current', 'cpu.max', 'cgroup.freeze']) writeFileSync(join(v2, f), '0');
    expect(faultProblems(all, externalCapabilities('x', { cgroup: v2 }))).toEqual([
      "faults[0] (agent-kill): needs the agent's pid; variant 'x' is an external agent without one",
    ]);
  });

  it('kind has no emulator to switch, and a fault after the load phase never runs', () => {
    const kind = {
      ...builtinCapabilities('k', { version: 'v1', memoryBase: '/m', cpuBase: '/c', freezerBase: '/f' }),
      kind: 'kind' as const,
      kubeletEmulator: false,
    };
    expect(faultProblems(all, kind)).toEqual([
      "faults[4] (kubelet-stall): needs the harness's kubelet emulator; variant 'k' runs in a kind cluster, which offers none",
    ]);
    expect(faultScheduleProblems(all, 1000)).toHaveLength(6);
    expect(faultScheduleProblems(all.slice(0, 1), 1000)).toEqual([
      'faults[0] (agent-kill): starts at 1s, at or after the end of the load phase (1s); it would never run',
    ]);
    expect(faultScheduleProblems(all, 1001)).toEqual([]);
  });
});
