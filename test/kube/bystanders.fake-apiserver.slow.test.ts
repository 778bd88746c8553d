// Bystanders in kind mode against the FAKE API server (test/kube/fake-apiserver.ts: no cluster can
// run here): bystander pods applied beside the storm, released with it, their seconds pulled
// through the pod proxy and attached to the storm's, and the same per-variant `bystanders` summary
// in the results. The agent and the generator processes behind the proxy are real.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aggregateVariant, parseScenario, stormLoadDriver, type Scenario } from '../../src/scenario/index.js';
import { adaptScenario, namespaceName, type GeneratorOptions, type RunningGenerator } from '../../src/kube/index.js';
import { startTestAgent, type TestAgent } from '../agent/harness.js';
import { FakeApiServer } from './fake-apiserver.js';
import { proxiedGenerator, runOnFake } from './support.js';

const dir = mkdtempSync(join(tmpdir(), 'attestorm-kube-bys-'));

function scenario(): Scenario {
  return parseScenario({
    name: 'kind-bystanders',
    duration: '4s',
    warmup: '300ms',
    placements: ['pre-attestation'],
    agent: { memoryLimit: '64Mi', attestors: ['unix'] },
    load: {
      pods: 1,
      workersPerPod: 2,
      deadline: '200ms',
      connection: 'per-call',
      bystanders: { pods: 2, workersPerPod: 1, rate: 4, deadline: '2s', connection: 'per-worker' },
    },
  }).scenario;
}

describe('bystander pods in a cluster run (fake API server, real agent, real generator processes)', () => {
  let fake: FakeApiServer;
  let agent: TestAgent;
  const generators: RunningGenerator[] = [];
  beforeAll(async () => {
    fake = await new FakeApiServer({ nodeImages: ['attestorm:dev'] }).start();
    // Limited per OS uid: the storm and the bystanders share the test's uid, as `uid: same` pods do.
    agent = await startTestAgent({ attestors: ['unix'], rateLimit: { placement: 'pre-attestation', key: 'os-uid', limits: { fetch_jwt_svid: 50 } } });
  });
  afterAll(async () => {
    await Promise.all(generators.map((g) => g.close()));
    await agent?.stop();
    await fake?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('applies, releases and collects them with the storm, counted apart, summarized as the local platform does', async () => {
    const s = scenario();
    const b = s.load.bystanders!;
    const variant = adaptScenario(s)[0]!;
    const runId = 'bys-1';
    const ns = namespaceName(runId, variant.name, 1);
    const start = async (name: string, load: GeneratorOptions['load']) => {
      generators.push(await proxiedGenerator(fake, ns, name, load));
    };
    await start('generator-0', { socket: agent.socketPath, workersPerPod: s.load.workersPerPod, deadlineMs: s.load.deadline, connection: 'per-call' });
    for (let i = 0; i < b.pods; i++) {
      await start(`bystander-${i}`, {
        socket: agent.socketPath,
        workersPerPod: b.workersPerPod,
        deadlineMs: b.deadline,
        connection: b.connection,
        retry: b.retry,
        rate: b.rate,
        methods: { [b.method]: 1 },
      });
    }
    const runDir = join(dir, 'run');
    const m = await runOnFake(fake, { kubeconfig: join(dir, 'kc.yaml'), scenario: s, variant, runId, runDir });
    expect(m.error).toBeUndefined();
    // The workers' client from the pods' final dumps, beside the one the scenario asked for.
    expect(m.loadClient).toEqual({ requested: 'h2', ran: 'h2' });

    // Applied as pods of their own, under their own role label.
    const applied = fake.applies.filter((a) => a.kind === 'Pod' && a.name !== 'memory-sampler' && !a.name?.startsWith('socket-janitor')).map((a) => a.name);
    expect(applied).toEqual(['generator-0', 'bystander-0', 'bystander-1']);
    // Released with the storm: one origin and end for all three pods.
    const gos = fake.requests.filter((r) => r.includes(`/namespaces/${ns}/`) && r.includes('/proxy/go-'));
    expect(gos.map((r) => /pods\/([^/:]+)/.exec(r)![1]).sort()).toEqual(['bystander-0', 'bystander-1', 'generator-0']);
    expect(new Set(gos.map((r) => r.split('/proxy/')[1])).size).toBe(1);

    // The bystanders' run: counted apart from the storm, with each pod's worker-side gap from its final dump.
    const run = m.bystanders!;
    expect(run).toBeDefined();
    expect(run.workers).toBe(2);
    expect(Object.keys(run.pods).sort()).toEqual(['bystander-0', 'bystander-1']);
    expect(run.totals.calls).toBeGreaterThan(0);
    expect(run.totals.ok).toBeGreaterThan(0);
    expect(run.summary.calls).toBe(run.totals.calls);
    expect(run.summary.longestGapMs).toBeLessThan(4000); // measured by the workers, not charged the whole phase
    const gens = generators.slice(1).map((g) => g.final().longestOkGapMs!);
    expect(run.summary.longestGapMs).toBe(Math.round(Math.max(...gens)));

    // samples.ndjson: the storm's seconds, each with the bystanders' same second attached.
    const load = readFileSync(join(runDir, 'pre-attestation.r1', 'samples.ndjson'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((l) => l.kind === 'load');
    const sum = (xs: any[], f: (x: any) => number) => xs.reduce((a, x) => a + f(x), 0);
    const calls = (c: any) => c.ok + c.rateLimited + c.deadlineExceeded + c.error;
    expect(sum(load, (l) => (l.bystanders ? calls(l.bystanders) : 0))).toBe(run.totals.calls);
    expect(sum(load, calls)).toBe(calls(m.counts));
    expect(Object.keys(load[0].pods)).toEqual(['generator-0']);

    // results.json's per-variant summary, from the same merge the local platform uses.
    const v = aggregateVariant('pre-attestation', { kind: 'reference', placement: 'pre-attestation', key: 'os-uid' }, [m], (e) => stormLoadDriver.summarize(e));
    expect(v.bystanders).toEqual({
      calls: run.totals.calls,
      ok: run.totals.ok,
      successRatio: run.totals.ok / run.totals.calls,
      p50Ms: expect.any(Number),
      p99Ms: expect.any(Number),
      longestGapMs: run.summary.longestGapMs,
      byStatus: run.totals.byCode,
    });
    expect(v.bystanders!.byStatus.OK).toBe(run.totals.ok);
  }, 120_000);
});
