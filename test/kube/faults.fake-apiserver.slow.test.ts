// Faults in kind mode against the FAKE API server (test/kube/fake-apiserver.ts: no cluster can run
// here): each mapped action must reach the API server as the right DELETE or resize PATCH at the
// right time, its start and end land on the timeline and in the per-variant fault records, and
// every action Kubernetes cannot express is refused by name before anything is applied. The agent
// and the generator processes behind the fake's pod proxy are real.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAULT_ACTIONS, parseFaults } from '../../src/fault/index.js';
import { parseScenario, type Scenario } from '../../src/scenario/index.js';
import { adaptScenario, namespaceName, type GeneratorOptions, type RunningGenerator } from '../../src/kube/index.js';
import { CLUSTER_FAULT_REFUSALS, clusterFaultProblems, clusterVersionProblems } from '../../src/platform/cluster/index.js';
import { startTestAgent, type TestAgent } from '../agent/harness.js';
import { FakeApiServer } from './fake-apiserver.js';
import { proxiedGenerator, runOnFake } from './support.js';

const dir = mkdtempSync(join(tmpdir(), 'attestorm-kube-faults-'));

function scenario(faults: unknown[], duration = '5s'): Scenario {
  return parseScenario({
    name: 'kind-faults',
    duration,
    warmup: '200ms',
    placements: ['pre-attestation'],
    agent: { memoryLimit: '64Mi', attestors: ['unix'] },
    load: { pods: 1, workersPerPod: 1, deadline: '200ms', connection: 'per-call', bystanders: { pods: 1, rate: 5, deadline: '1s' } },
    faults,
  }).scenario;
}

describe('which faults a cluster run can carry out', () => {
  it('maps agent-kill, memory-squeeze and pod-churn; names every other action with its rule', () => {
    const mapped = ['agent-kill', 'memory-squeeze', 'pod-churn'];
    expect(FAULT_ACTIONS.filter((a) => !CLUSTER_FAULT_REFUSALS[a])).toEqual(mapped);
    const faults = parseFaults([
      { at: '1s', action: 'agent-kill' },
      { at: '1s', for: '1s', action: 'agent-pause' },
      { at: '1s', for: '1s', action: 'cpu-throttle', cores: 0.5 },
      { at: '1s', for: '1s', action: 'kubelet-latency', value: '1s' },
      { at: '1s', for: '1s', action: 'kubelet-errors', rate: 0.5 },
      { at: '1s', for: '1s', action: 'kubelet-down' },
      { at: '3s', for: '1s', action: 'kubelet-stall' },
      { at: '1s', for: '1s', action: 'slow-clients', count: 3 },
      { at: '1s', for: '1s', action: 'burst', workers: 3 },
      { at: '1s', for: '1s', action: 'memory-squeeze', to: '32Mi' },
      { at: '2s', action: 'pod-churn', count: 1 },
    ]);
    expect(clusterFaultProblems(faults, 'chaos.yaml: ')).toEqual([
      "chaos.yaml: faults[1] (agent-pause) cannot run in kind mode: Kubernetes has no API to freeze a running container (the cgroup freezer is the node's); remove it or run locally",
      "chaos.yaml: faults[2] (cpu-throttle) cannot run in kind mode: the agent pod has no CPU limit to lower in place (a CPU limit would throttle every variant's baseline); remove it or run locally",
      "chaos.yaml: faults[3] (kubelet-latency) cannot run in kind mode: the kubelet is the cluster's real one, not the harness's emulator; remove it or run locally",
      "chaos.yaml: faults[4] (kubelet-errors) cannot run in kind mode: the kubelet is the cluster's real one, not the harness's emulator; remove it or run locally",
      "chaos.yaml: faults[5] (kubelet-down) cannot run in kind mode: the kubelet is the cluster's real one, not the harness's emulator; remove it or run locally",
      "chaos.yaml: faults[6] (kubelet-stall) cannot run in kind mode: the kubelet is the cluster's real one, not the harness's emulator; remove it or run locally",
      "chaos.yaml: faults[7] (slow-clients) cannot run in kind mode: it opens connections to the agent's socket, which is on the cluster's node, not on this machine; remove it or run locally",
      'chaos.yaml: faults[8] (burst) cannot run in kind mode: extra storm workers mid-run are not supported by the generator pods yet; remove it or run locally',
    ]);
  });

  it('memory-squeeze needs the resize subresource (Kubernetes >= 1.33)', () => {
    const faults = parseFaults([{ at: '1s', for: '1s', action: 'memory-squeeze', to: '32Mi' }]);
    expect(clusterVersionProblems(faults, 'v1.32.4')).toEqual([
      "faults[0] (memory-squeeze) needs in-place pod resize (the pod resize subresource, Kubernetes >= 1.33); the cluster's API server is v1.32.4",
    ]);
    expect(clusterVersionProblems(faults, 'v1.33.1')).toEqual([]);
    expect(clusterVersionProblems(faults, 'v1.35.0+k3s1')).toEqual([]);
  });
});

describe('mapped faults in a cluster run (fake API server, real agent, real generator processes)', () => {
  let agent: TestAgent;
  const generators: RunningGenerator[] = [];
  beforeAll(async () => {
    agent = await startTestAgent({ attestors: ['unix'] });
  });
  afterAll(async () => {
    await Promise.all(generators.map((g) => g.close()));
    await agent?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('an API server older than 1.33 refuses memory-squeeze at preflight: nothing is applied', async () => {
    const fake = await new FakeApiServer({ nodeImages: ['attestorm:dev'], version: 'v1.32.0-fake' }).start();
    try {
      const s = scenario([{ at: '1s', for: '1s', action: 'memory-squeeze', to: '32Mi' }]);
      const run = runOnFake(fake, { kubeconfig: join(dir, 'old.yaml'), scenario: s, runId: 'old-1', runDir: join(dir, 'run-old') });
      await expect(run).rejects.toThrow(
        "preflight (faults): faults[0] (memory-squeeze) needs in-place pod resize (the pod resize subresource, Kubernetes >= 1.33); the cluster's API server is v1.32.0-fake",
      );
      expect(fake.applies).toEqual([]);
    } finally {
      await fake.close();
    }
  });

  it("agent-kill deletes the agent pod (SIGKILL: grace 0, SIGTERM: the pod's own), memory-squeeze resizes and restores it, pod-churn deletes and re-creates a storm pod — each at its time", async () => {
    const fake = await new FakeApiServer({ nodeImages: ['attestorm:dev'], version: 'v1.33.2-fake' }).start();
    try {
      const s = scenario([
        { at: '1s', action: 'agent-kill' },
        { at: '1500ms', for: '1s', action: 'memory-squeeze', to: '32Mi' },
        { at: '2s', action: 'pod-churn', count: 1 },
        { at: '3500ms', action: 'agent-kill', signal: 'SIGTERM' },
      ]);
      const variant = adaptScenario(s)[0]!;
      const runId = 'faults-1';
      const ns = namespaceName(runId, variant.name, 1);
      const b = s.load.bystanders!;
      // The processes the pods would run, behind the fake's pod proxy: the storm pod, its replacement, a bystander.
      const start = async (name: string, load: GeneratorOptions['load']) => {
        generators.push(await proxiedGenerator(fake, ns, name, load));
      };
      for (const name of ['generator-0', 'generator-c1'])
        await start(name, { socket: agent.socketPath, workersPerPod: 1, deadlineMs: 200, connection: 'per-call' });
      await start('bystander-0', { socket: agent.socketPath, workersPerPod: 1, deadlineMs: b.deadline, connection: b.connection, rate: b.rate });
      for (const pod of ['agent-fake1', 'agent-fake2', 'agent-fake3']) fake.proxies.set(`${ns}/${pod}`, agent.agent.metricsUrl!.replace(/\/metrics$/, ''));

      const runDir = join(dir, 'run');
      const m = await runOnFake(fake, { kubeconfig: join(dir, 'kc.yaml'), scenario: s, variant, runId, runDir });
      expect(m.error).toBeUndefined();
      const go = fake.requests.find((r) => r.includes('/proxy/go-'))!;
      const t0 = Number(/go-(\d+)-/.exec(go)![1]);
      // The teardown's socket janitor is not a fault's change.
      const changes = fake.changes.filter((c) => c.at >= t0 && c.path.includes(`/namespaces/${ns}/pods/`) && !c.path.includes('/pods/socket-janitor-'));
      const pod = (c: { path: string }) => c.path.split('/pods/')[1];

      // The DELETEs and PATCHes the API server saw, in order, each no earlier than its fault's `at`.
      expect(changes.map((c) => `${c.method} ${pod(c)}`)).toEqual([
        'DELETE agent-fake1',
        'PATCH agent-fake2/resize',
        'DELETE generator-0',
        'PATCH generator-c1', // server-side apply of the re-created storm pod
        'PATCH agent-fake2/resize',
        'DELETE agent-fake2',
      ]);
      const [kill1, squeeze, churn, recreate, restore, kill2] = changes;
      expect(kill1!.at - t0).toBeGreaterThanOrEqual(1000);
      expect(kill1!.query.gracePeriodSeconds).toBe('0');
      expect(squeeze!.at - t0).toBeGreaterThanOrEqual(1500);
      expect(squeeze!.contentType).toBe('application/strategic-merge-patch+json');
      expect(squeeze!.body).toEqual({ spec: { containers: [{ name: 'agent', resources: { requests: { memory: '32Mi' }, limits: { memory: '32Mi' } } }] } });
      expect(churn!.at - t0).toBeGreaterThanOrEqual(2000);
      expect(churn!.query.gracePeriodSeconds).toBe('0');
      expect(recreate!.contentType).toBe('application/apply-patch+yaml');
      expect(restore!.at - t0).toBeGreaterThanOrEqual(2500);
      expect(restore!.body).toEqual({ spec: { containers: [{ name: 'agent', resources: { requests: { memory: '64Mi' }, limits: { memory: '64Mi' } } }] } });
      expect(kill2!.at - t0).toBeGreaterThanOrEqual(3500);
      expect(kill2!.query.gracePeriodSeconds).toBeUndefined(); // SIGTERM: the pod's terminationGracePeriodSeconds
      // The re-created storm pod joined the load with the run's origin and end.
      const gos = fake.requests.filter((r) => r.includes('/proxy/go-')).map((r) => [/pods\/([^/:]+)/.exec(r)![1], r.split('/proxy/')[1]]);
      expect(gos.map(([p]) => p).sort()).toEqual(['bystander-0', 'generator-0', 'generator-c1']);
      expect(new Set(gos.map(([, g]) => g)).size).toBe(1);

      // The records results.json carries, as in local mode.
      expect(m.faults!.map((f) => [f.rep, f.action, f.atMs, f.forMs, f.error])).toEqual([
        [1, 'agent-kill', 1000, null, undefined],
        [1, 'memory-squeeze', 1500, 1000, undefined],
        [1, 'pod-churn', 2000, null, undefined],
        [1, 'agent-kill', 3500, null, undefined],
      ]);
      for (const f of m.faults!) {
        expect(f.startedAtMs!).toBeGreaterThanOrEqual(f.atMs);
        expect(f.endedAtMs!).toBeGreaterThanOrEqual(f.startedAtMs!);
      }
      expect(m.faults![0]!.detail).toMatch(/^deleted agent pod agent-fake1 \(grace period 0, as SIGKILL\); its DaemonSet replaced it after \d+ ms$/);
      expect(m.faults![1]!.detail).toBe(
        'memory limit 64Mi → 32.0 MiB (agent pod agent-fake2, resize subresource); memory limit restored to 64Mi (agent pod agent-fake2)',
      );
      expect(m.faults![2]!.detail).toContain('deleted storm pod generator-0 (grace period 0) and created generator-c1 in their place');
      // Recovery: a real call made from inside a load pod through the proxy reached the agent; bystanders measured.
      expect(m.faults![0]!.recovery.agentReadyMs).not.toBeNull();
      expect(m.faults![0]!.recovery.callsLost).not.toBeNull();
      // Two deaths by fault, not counted as OOM kills; each replacement pod is a restart.
      expect(m.deaths.map((d) => [d.cause, d.counted])).toEqual([
        ['fault-kill', false],
        ['fault-kill', false],
      ]);
      expect(m.oomKills).toBe(0);
      expect(m.restarts).toBe(2);
      // The generator-c1's calls are in the storm's counts.
      expect(generators[1]!.final().calls).toBeGreaterThan(0);

      const events = readFileSync(join(runDir, 'pre-attestation.r1', 'samples.ndjson'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
        .filter((l) => l.kind === 'event');
      expect(events.filter((e) => e.type === 'fault-start').map((e) => e.detail.split(':')[0])).toEqual([
        'faults[0] agent-kill',
        'faults[1] memory-squeeze',
        'faults[2] pod-churn',
        'faults[3] agent-kill',
      ]);
      expect(events.filter((e) => e.type === 'fault-end')).toHaveLength(4);
    } finally {
      await fake.close();
    }
  }, 120_000);
});
