// The kind-mode orchestrator against a FAKE API server (test/kube/fake-apiserver.ts: no cluster can
// run here). Everything else is real: client-node over HTTP on loopback, the watch stream, the
// reference agent on a Unix socket, generator pods' processes forking real workers, reached
// through the fake's pod proxy, and cgroup files (a v2 fixture tree: this machine is cgroup v1).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseScenario, type Scenario } from '../../src/scenario/index.js';
import { adaptScenario, namespaceName, renderContext, renderVariant, type RunningGenerator } from '../../src/kube/index.js';
import { loadKubeConfig, parseClusterTarget, preflight } from '../../src/platform/cluster/index.js';
import { RunEndingFailure } from '../../src/platform/index.js';
import { startTestAgent, type TestAgent } from '../agent/harness.js';
import { FakeApiServer, hex64 } from './fake-apiserver.js';
import { fakeKubeConfig, proxiedGenerator, runOnFake } from './support.js';

const PROJECT_IMAGE = 'attestorm:dev';
const AGENT_UID = '7d2f1c3a-1111-4222-8333-944455556666';
const dir = mkdtempSync(join(tmpdir(), 'attestorm-kube-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function scenario(): Scenario {
  return parseScenario({
    name: 'kind-fake',
    duration: '4s',
    warmup: '500ms',
    placements: ['pre-attestation'],
    agent: { memoryLimit: '64Mi', attestors: ['unix'] },
    load: { pods: 2, workersPerPod: 2, deadline: '200ms', connection: 'per-call' },
  }).scenario;
}

describe('preflight error paths, each naming its step', () => {
  it('no kubeconfig: refused instead of falling back to localhost:8080; a missing KUBECONFIG file named', () => {
    const saved = process.env.KUBECONFIG;
    const savedHome = process.env.HOME;
    delete process.env.KUBECONFIG;
    process.env.HOME = join(dir, 'empty-home');
    try {
      expect(() => loadKubeConfig(parseClusterTarget({ cluster: 'kind:demo' }))).toThrow(
        /^preflight \(context\): no kubeconfig found .*localhost:8080.*attestorm kind up --name demo/,
      );
      process.env.KUBECONFIG = join(dir, 'does-not-exist.yaml');
      expect(() => loadKubeConfig(parseClusterTarget({ cluster: 'kind:demo' }))).toThrow(
        /^preflight \(context\): cannot read the kubeconfig \(KUBECONFIG=.*does-not-exist.yaml\): ENOENT/,
      );
    } finally {
      process.env.KUBECONFIG = saved;
      process.env.HOME = savedHome;
      if (saved === undefined) delete process.env.KUBECONFIG;
    }
  });

  it('a context the kubeconfig does not have is named with the ones it has', async () => {
    const fake = await new FakeApiServer().start();
    try {
      const file = fake.writeKubeconfig(join(dir, 'ctx.yaml'), 'kind-other');
      expect(() => loadKubeConfig(parseClusterTarget({ cluster: 'kind' }), file)).toThrow(
        'preflight (context): context "kind-attestorm" is not in the kubeconfig',
      );
      expect(loadKubeConfig(parseClusterTarget({ context: 'kind-other' }), file).getCurrentContext()).toBe('kind-other');
    } finally {
      await fake.close();
    }
  });

  it('--cluster and --context are checked before anything is read', () => {
    expect(() => parseClusterTarget({ cluster: 'minikube' })).toThrow('--cluster must be kind or kind:<name>');
    expect(() => parseClusterTarget({ cluster: 'kind', context: 'x' })).toThrow('--cluster and --context name the cluster twice');
    expect(parseClusterTarget({ cluster: 'kind:ci' })).toEqual({ context: 'kind-ci', kindName: 'ci' });
  });

  it('an unreachable API server', async () => {
    const fake = await new FakeApiServer().start();
    const file = fake.writeKubeconfig(join(dir, 'down.yaml'));
    await fake.close(); // nothing listens on that port any more
    const kc = loadKubeConfig(parseClusterTarget({ context: 'kind-fake' }), file);
    await expect(preflight(kc, [], { localImages: [], timeoutMs: 3000 })).rejects.toThrow(
      /^preflight \(api-server\): the API server of context kind-fake at https:\/\/127\.0\.0\.1:\d+ is not reachable: ECONNREFUSED/,
    );
  });

  it('a locally built image that is not on the node: names `kind load`, applies nothing', async () => {
    const fake = await new FakeApiServer({ nodeImages: [] }).start();
    try {
      const run = runOnFake(fake, { kubeconfig: join(dir, 'img.yaml'), scenario: scenario(), runId: 'img-1', runDir: join(dir, 'run-img') });
      await expect(run).rejects.toThrow(
        /^preflight \(images\): image attestorm:dev is built locally and is not on node fake-control-plane: .*kind load docker-image attestorm:dev/,
      );
      expect(fake.applies).toEqual([]);
    } finally {
      await fake.close();
    }
  });

  it("a locally built image the node lists only a few seconds after `kind load` (the kubelet's next status update): waited for, not refused", async () => {
    const fake = await new FakeApiServer({ nodeImages: [PROJECT_IMAGE], nodeImagesAfterMs: 3000 }).start();
    try {
      const kc = fakeKubeConfig(fake, join(dir, 'late.yaml'));
      const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: PROJECT_IMAGE }] } };
      const t0 = Date.now();
      const facts = await preflight(kc, [pod], { localImages: [PROJECT_IMAGE] });
      expect(Date.now() - t0).toBeGreaterThanOrEqual(2500);
      expect(facts.toPull).toEqual([]);
      expect(facts.nodes[0]!.images).toContain(`docker.io/library/${PROJECT_IMAGE}`);
      // Not listed within the wait: refused, naming `kind load`.
      await expect(
        preflight(kc, [{ ...pod, spec: { containers: [{ name: 'c', image: 'attestorm:other' }] } }], { localImages: ['attestorm:other'], imageWaitMs: 1500 }),
      ).rejects.toThrow(
        /^preflight \(images\): image attestorm:other is built locally and is not on node fake-control-plane: .*kind load docker-image attestorm:other/,
      );
    } finally {
      await fake.close();
    }
  });

  it('public images absent from the node are left to the node to pull; the project image (as docker.io/library/…) is found', async () => {
    const digest = `docker.io/library/attestorm@sha256:${'c'.repeat(64)}`;
    const fake = await new FakeApiServer({ nodeImages: [[`docker.io/library/${PROJECT_IMAGE}`, digest]] }).start();
    try {
      const kc = fakeKubeConfig(fake, join(dir, 'pull.yaml'));
      const s = scenario();
      const ctx = renderContext(
        s,
        { name: 'spire', kind: 'spire', memoryLimitBytes: 64 * 2 ** 20, placement: null, key: null, rateLimits: {}, fillerPods: null, kubeletNotApplied: [] },
        { runId: 'p' },
      );
      const r = await preflight(kc, renderVariant(ctx), { localImages: [PROJECT_IMAGE] });
      expect(r.serverVersion).toBe('v1.31.0-fake');
      expect(r.toPull.sort()).toEqual([ctx.images.spireAgent, ctx.images.spireServer].sort());
      expect(r.digests).toEqual({ [PROJECT_IMAGE]: digest });
      expect(r.nodes).toEqual([expect.objectContaining({ name: 'fake-control-plane', uid: 'node-uid-1', kubeletVersion: 'v1.31.0-fake' })]);
    } finally {
      await fake.close();
    }
  });

  it('an agent stuck pulling its image fails the run by name and the namespace is still deleted', async () => {
    const fake = await new FakeApiServer({ nodeImages: [PROJECT_IMAGE], agentStart: 'image-pull-backoff' }).start();
    try {
      const ns = namespaceName('stuck-1', 'pre-attestation', 1);
      await expect(
        runOnFake(fake, {
          kubeconfig: join(dir, 'stuck.yaml'),
          scenario: scenario(),
          runId: 'stuck-1',
          runDir: join(dir, 'run-stuck'),
          timeouts: { agentReadyMs: 10_000 },
        }),
      ).rejects.toThrow(`agent pod in ${ns} cannot start: ImagePullBackOff: Back-off pulling image "attestorm:dev"`);
      expect(fake.deleted).toContain(`/api/v1/namespaces/${ns}`);
      expect(fake.deleted.filter((p) => p.includes('clusterrole'))).toHaveLength(2);
    } finally {
      await fake.close();
    }
  });
});

describe('a variant run against the fake API server, with a real agent and real generator processes', () => {
  let fake: FakeApiServer;
  let agent: TestAgent;
  const generators: RunningGenerator[] = [];
  beforeAll(async () => {
    fake = await new FakeApiServer({ nodeImages: [PROJECT_IMAGE], agentPodUid: AGENT_UID }).start();
    // What the cluster's agent would run for this variant: a limiter before attestation, 10 per second.
    agent = await startTestAgent({ attestors: ['unix'], rateLimit: { placement: 'pre-attestation', key: 'os-uid', limits: { fetch_jwt_svid: 10 } } });
  });
  afterEach(async () => {
    await Promise.all(generators.splice(0).map((g) => g.close()));
  });
  afterAll(async () => {
    await agent?.stop();
    await fake?.close();
  });

  it('applies server-side, releases the generators together, collects through the pod proxy, classifies kills, saves logs, tears down', async () => {
    const s = scenario();
    const variant = adaptScenario(s)[0]!;
    const runId = 'full-1';
    const ns = namespaceName(runId, variant.name, 1);
    // The real generator processes the fake's pod proxy forwards to (what the pods would run).
    for (let i = 0; i < s.load.pods; i++)
      generators.push(
        await proxiedGenerator(fake, ns, `generator-${i}`, {
          socket: agent.socketPath,
          workersPerPod: s.load.workersPerPod,
          deadlineMs: 200,
          connection: 'per-call',
        }),
      );
    // The agent's metrics endpoint (host network in the cluster), reached through the pod proxy too.
    fake.proxies.set(`${ns}/agent-fake1`, agent.agent.metricsUrl!.replace(/\/metrics$/, ''));
    // The agent pod's cgroup as the host sees it through the node container (v2 fixture).
    const nodeDir = join(dir, 'node-cgroup');
    const slice = join(
      nodeDir,
      'kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-burstable.slice',
      `kubelet-kubepods-burstable-pod${AGENT_UID.replace(/-/g, '_')}.slice`,
    );
    mkdirSync(slice, { recursive: true });
    const setMem = (current: number, peak: number, oomKills: number) => {
      writeFileSync(join(slice, 'memory.current'), `${current}\n`);
      writeFileSync(join(slice, 'memory.peak'), `${peak}\n`);
      writeFileSync(join(slice, 'memory.max'), `${64 * 2 ** 20}\n`);
      writeFileSync(join(slice, 'memory.events'), `low 0\nhigh 0\nmax 3\noom 1\noom_kill ${oomKills}\n`);
      writeFileSync(join(slice, 'cpu.stat'), 'usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n');
    };
    setMem(20 * 2 ** 20, 30 * 2 ** 20, 0);

    // The kubelet's part: once the load is released, the agent dies four ways.
    const kubelet = (async () => {
      while (!fake.requests.some((r) => r.startsWith('POST') && r.includes('/proxy/go-'))) await new Promise((r) => setTimeout(r, 50));
      const kill = (reason: string, exitCode: number, restartCount: number) =>
        fake.updateAgent(ns, (c) => {
          const old = c.containerID;
          c.lastState = {
            terminated: {
              reason,
              exitCode,
              containerID: old,
              startedAt: new Date().toISOString(),
              finishedAt: new Date(Date.now() - restartCount * 1000).toISOString(),
            },
          };
          c.restartCount = restartCount;
          c.containerID = `containerd://${hex64()}`;
          c.state = { running: { startedAt: new Date().toISOString() } };
          c.ready = true;
        });
      const notReady = () => fake.updateAgent(ns, (c) => void (c.ready = false));
      await new Promise((r) => setTimeout(r, 300));
      setMem(64 * 2 ** 20, 64 * 2 ** 20, 1);
      notReady();
      await new Promise((r) => setTimeout(r, 300));
      kill('OOMKilled', 137, 1);
      // The same termination reported again (a later status update): counted once.
      fake.updateAgent(ns, (c) => void (c.ready = true));
      await new Promise((r) => setTimeout(r, 200));
      setMem(64 * 2 ** 20, 64 * 2 ** 20, 2);
      kill('Error', 137, 2); // the containerd race: Error/137 while oom_kill rose → an OOM kill
      await new Promise((r) => setTimeout(r, 200));
      kill('Error', 137, 3); // 137 without a rise of oom_kill → a kill by signal, not OOM
      await new Promise((r) => setTimeout(r, 200));
      kill('Completed', 0, 4);
      fake.logs.set(`${ns}/agent-fake1/agent`, 'agent log now\n');
      fake.logs.set(`${ns}/agent-fake1/agent/previous`, 'agent log before the kill\n');
    })();

    const runDir = join(dir, 'run-full');
    const lines: string[] = [];
    const m = await runOnFake(fake, {
      kubeconfig: join(dir, 'full.yaml'),
      scenario: s,
      variant,
      runId,
      runDir,
      nodeCgroup: { version: 'v2', dir: nodeDir },
      onSample: (l) => lines.push(l.kind),
    });
    await kubelet;

    // Server-side apply with field manager attestorm, force, every object of the variant (and, at teardown,
    // the socket janitor's namespace and pod).
    expect(fake.applies.length).toBe(renderVariant(renderContext(s, variant, { runId })).length + 2);
    for (const a of fake.applies) {
      expect(a.contentType).toBe('application/apply-patch+yaml');
      expect(a.fieldManager).toBe('attestorm');
      expect(a.force).toBe('true');
    }
    // Both generators released with the same origin and end.
    const gos = fake.requests.filter((r) => r.includes('/proxy/go-')).map((r) => r.split('/proxy/')[1]);
    expect(gos).toHaveLength(2);
    expect(new Set(gos).size).toBe(1);
    // Calls were made by the real workers and collected through the proxy.
    const calls = m.counts.ok + m.counts.rateLimited + m.counts.error + m.counts.deadlineExceeded;
    expect(calls).toBeGreaterThan(0);
    expect(m.loadSeconds).toBeGreaterThan(3);
    expect(Object.keys(m.histograms).length).toBeGreaterThan(0);
    // OOMKilled once (deduplicated), Error/137 with oom_kill risen once; not the plain 137.
    expect(m.oomKills).toBe(2);
    expect(m.restarts).toBe(4);
    expect(m.deaths.map((d) => [d.cause, d.phase, d.counted])).toEqual([
      ['oom-kill', 'load', true],
      ['oom-kill', 'load', true],
      ['signal', 'load', false],
      ['exit', 'load', false],
    ]);
    expect(m.peaks.usageBytes).toBe(64 * 2 ** 20);
    // Metrics scraped through the pod proxy: the limiter rejected calls (10/s per key, 4 workers in a tight loop).
    expect(m.peakInflightAttestations).not.toBeNull();
    expect(Object.values(m.rejectionsByKeyType).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    // The run folder: the same SampleLine kinds the local platform writes.
    const ndjson = readFileSync(join(runDir, 'pre-attestation.r1', 'samples.ndjson'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const mem = ndjson.filter((l) => l.kind === 'memory');
    expect(mem.length).toBeGreaterThan(10);
    expect(mem[0]).toMatchObject({ usageBytes: 20 * 2 ** 20, limitBytes: 64 * 2 ** 20, cpuSeconds: 2.5 });
    const load = ndjson.filter((l) => l.kind === 'load');
    expect(load.length).toBeGreaterThanOrEqual(4);
    expect(load.reduce((a, l) => a + l.ok + l.rateLimited + l.error + l.deadlineExceeded, 0)).toBe(calls);
    expect(ndjson.filter((l) => l.kind === 'metrics').length).toBeGreaterThanOrEqual(3);
    const events = ndjson.filter((l) => l.kind === 'event').map((l) => l.type);
    expect(events.filter((e) => e === 'oom-kill')).toHaveLength(2);
    expect(events).toContain('load-start');
    expect(lines).toContain('load');
    expect(readFileSync(join(runDir, 'pre-attestation.r1', 'agent.previous.log'), 'utf8')).toBe('agent log before the kill\n');
    expect(existsSync(join(runDir, 'pre-attestation.r1', 'agent.log'))).toBe(true);
    // Teardown: the namespace and the cluster-scoped RBAC first, then — once no pod of the namespace can
    // restart and have the kubelet re-create it — the socket directory on the node (a janitor pod per
    // node, in a janitor namespace of its own, the parent directory as its hostPath).
    expect(fake.janitors).toEqual([
      expect.objectContaining({
        namespace: expect.stringMatching(/^attestorm-janitor-/),
        node: 'fake-control-plane',
        hostPath: '/run/attestorm',
        env: expect.objectContaining({ ATTESTORM_REMOVE: JSON.stringify([ns]) }),
      }),
    ]);
    const nsDeleted = fake.changes.find((c) => c.method === 'DELETE' && c.path === `/api/v1/namespaces/${ns}`)!;
    expect(fake.janitors[0]!.at).toBeGreaterThanOrEqual(nsDeleted.at);
    expect(fake.deleted).toContain(`/api/v1/namespaces/${fake.janitors[0]!.namespace}`);
    expect(fake.deleted).toContain(`/api/v1/namespaces/${ns}`);
    expect([...fake.objects.keys()].filter((k) => k.includes(ns))).toEqual([]);
  }, 120_000);

  it("an interrupt (the runner's SIGINT aborts the signal) during the load: generators stopped, data kept, namespace deleted", async () => {
    const s = scenario();
    const variant = adaptScenario(s)[0]!;
    const runId = 'abort-1';
    const ns = namespaceName(runId, variant.name, 1);
    for (let i = 0; i < s.load.pods; i++)
      generators.push(await proxiedGenerator(fake, ns, `generator-${i}`, { socket: agent.socketPath, workersPerPod: 1, deadlineMs: 200 }));
    const ac = new AbortController();
    const released = (async () => {
      while (!fake.requests.some((r) => r.includes(`/namespaces/${ns}/`) && r.includes('/proxy/go-'))) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 1500));
      ac.abort();
    })();
    const runDir = join(dir, 'run-abort');
    const m = await runOnFake(fake, { kubeconfig: join(dir, 'abort.yaml'), scenario: { ...s, duration: 60_000 }, variant, runId, runDir, signal: ac.signal });
    await released;
    expect(m.loadSeconds).toBeLessThan(30);
    expect(fake.requests.filter((r) => r.includes(`/namespaces/${ns}/`) && r.endsWith('/proxy/stop'))).toHaveLength(2);
    expect(fake.deleted).toContain(`/api/v1/namespaces/${ns}`);
    const events = readFileSync(join(runDir, 'pre-attestation.r1', 'samples.ndjson'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((l) => l.kind === 'event')
      .map((l) => l.type);
    expect(events).toContain('interrupted');
  }, 120_000);

  it("the agent node's container gone during the load (kind: docker rm -f): the run ends with the reason, its data kept, the namespace deleted", async () => {
    const s = scenario();
    const variant = adaptScenario(s)[0]!;
    const runId = 'gone-1';
    const ns = namespaceName(runId, variant.name, 1);
    for (let i = 0; i < s.load.pods; i++)
      generators.push(await proxiedGenerator(fake, ns, `generator-${i}`, { socket: agent.socketPath, workersPerPod: 1, deadlineMs: 200 }));
    // A stand-in for `docker inspect` of the node container: running until 1.5 s after the release, then removed.
    let goneAt: number | null = null;
    const released = (async () => {
      while (!fake.requests.some((r) => r.includes(`/namespaces/${ns}/`) && r.includes('/proxy/go-'))) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 1500));
      goneAt = Date.now();
    })();
    const nodeContainer = async (node: string) =>
      goneAt === null
        ? ({ running: true, startedAt: '2026-01-01T00:00:00Z' } as const)
        : ({ running: false, why: `its container ${node} no longer exists in the engine` } as const);
    const runDir = join(dir, 'run-gone');
    const failed = await runOnFake(fake, {
      kubeconfig: join(dir, 'gone.yaml'),
      scenario: { ...s, duration: 60_000 },
      variant,
      runId,
      runDir,
      nodeContainer,
    }).catch((err: unknown) => err);
    await released;
    expect(failed).toBeInstanceOf(RunEndingFailure);
    const why = "the agent's node fake-control-plane is lost: its container fake-control-plane no longer exists in the engine";
    expect((failed as RunEndingFailure).message).toBe(why);
    const m = (failed as RunEndingFailure).measurement;
    expect(m.error).toBe(why);
    // Found within the 2 s between checks, well before the 60 s load's end.
    expect(m.loadSeconds).toBeLessThan(10);
    expect(fake.deleted).toContain(`/api/v1/namespaces/${ns}`);
    const lines = readFileSync(join(runDir, 'pre-attestation.r1', 'samples.ndjson'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.some((l) => l.kind === 'load')).toBe(true);
    expect(lines.some((l) => l.kind === 'event' && l.type === 'note' && l.detail === `variant run failed, the run ends: ${why}`)).toBe(true);
  }, 120_000);
});
