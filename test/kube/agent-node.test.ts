// The agent node watch: a node container's start time read for one node is never compared with
// another node's. Real KubeConfig against a port nothing listens on (the Node reads fail, which
// within the outage bound is no loss); the container probe is the test's own, answering late.
import { describe, expect, it } from 'vitest';
import { AgentNodeWatch, type NodeContainerProbe } from '../../src/platform/cluster/agent-node.js';
import { unreachableKubeConfig } from './support.js';

describe('AgentNodeWatch', () => {
  it('an answer about the node the agent left is dropped: no restart is read into the next node', async () => {
    const started: Record<string, string> = { 'k-worker': '2026-12-06T05:02:10Z', 'k-worker2': '2026-12-06T05:02:18Z' };
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const probe: NodeContainerProbe = async (node) => {
      if (node === 'k-worker') await gate;
      return { running: true, startedAt: started[node]! };
    };
    const watch = new AgentNodeWatch(unreachableKubeConfig(), { container: probe, callMs: 200 });
    watch.follow('k-worker');
    const first = watch.check();
    watch.follow('k-worker2'); // the agent pod was bound to the other worker meanwhile
    release();
    expect(await first).toBeNull();
    expect(await watch.check()).toBeNull();
    expect(await watch.check()).toBeNull();
    // A real restart of the node followed is still seen.
    started['k-worker2'] = '2026-12-06T05:09:00Z';
    expect(await watch.check()).toMatch(/^the agent's node k-worker2 restarted \(its container started again at 2026-12-06T05:09:00Z/);
  });
});
