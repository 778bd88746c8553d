// Classifying the agent container's terminations from pod status objects as the watch delivers them.
import { describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { AgentTracker, classifyTermination } from '../../src/platform/cluster/index.js';

const ID1 = `containerd://${'1'.repeat(64)}`;
const ID2 = `containerd://${'2'.repeat(64)}`;

function pod(status: Record<string, unknown>): V1Pod {
  return {
    metadata: { name: 'agent-x', uid: 'u' },
    status: { containerStatuses: [{ name: 'agent', image: 'i', imageID: '', ready: false, restartCount: 0, ...status }] },
  } as V1Pod;
}

describe('classifyTermination', () => {
  it('OOMKilled; Error/137 only with a risen oom_kill counter; plain kills and exits', () => {
    expect(classifyTermination({ reason: 'OOMKilled', exitCode: 137 }, null).cause).toBe('oom-kill');
    expect(classifyTermination({ reason: 'Error', exitCode: 137 }, true)).toEqual({
      cause: 'oom-kill',
      detail: "Error/137 while the cgroup's oom_kill counter rose",
    });
    expect(classifyTermination({ reason: 'Error', exitCode: 137 }, false).cause).toBe('signal');
    expect(classifyTermination({ reason: 'Error', exitCode: 137 }, null).detail).toContain('oom_kill counter not readable');
    expect(classifyTermination({ reason: 'Error', exitCode: 1 }, true).cause).toBe('exit');
  });
});

describe('AgentTracker', () => {
  it('counts one kill once however often the status repeats it, restarts relative to the first sight, container changes', () => {
    let now = 1000;
    const changes: string[] = [];
    const events: string[] = [];
    const t = new AgentTracker({
      container: 'agent',
      now: () => now,
      oomKillRose: () => false,
      onContainerChange: (id) => changes.push(id),
      event: (type) => events.push(type),
    });
    t.observe(pod({ ready: true, containerID: ID1, restartCount: 2, state: { running: {} } }));
    expect(t.restarts).toBe(0);
    now = 2000;
    const killed = { terminated: { reason: 'OOMKilled', exitCode: 137, containerID: ID1, finishedAt: new Date(1500) } };
    t.observe(pod({ ready: false, containerID: ID1, restartCount: 2, state: killed }));
    now = 4500;
    t.observe(pod({ ready: true, containerID: ID2, restartCount: 3, lastState: killed, state: { running: {} } }));
    t.observe(pod({ ready: true, containerID: ID2, restartCount: 3, lastState: killed, state: { running: {} } }));
    expect(t.oomKills).toBe(1);
    expect(t.restarts).toBe(1);
    expect(t.downtimeSeconds()).toBe(2.5);
    expect(changes).toEqual([ID1, ID2]);
    expect(events.filter((e) => e === 'oom-kill')).toHaveLength(1);
  });

  it('a container that cannot start is reported as stuck', () => {
    const stuck: string[] = [];
    const t = new AgentTracker({ container: 'agent', onStuck: (r) => stuck.push(r) });
    t.observe(pod({ state: { waiting: { reason: 'ErrImagePull', message: 'not found' } } }));
    t.observe(pod({ state: { waiting: { reason: 'ContainerCreating' } } }));
    expect(stuck).toEqual(['ErrImagePull: not found']);
  });
});
