// Kubernetes mode on a REAL cluster: runs only when one is named (ATTESTORM_TEST_KUBECONFIG and
// ATTESTORM_TEST_CONTEXT; `.ci/run` sets both after `attestorm cluster up`), and otherwise skips
// saying so. Through the CLI, as a user runs it: the shipped ci-kind scenario end to end, a storm of
// native workers, one fault of each kind Kubernetes mode maps, a second run right after the first, and a runner killed with
// SIGKILL mid-run followed by `kind cleanup`. `npm run test:cluster`.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupCluster, loadKubeConfig, parseClusterTarget } from '../../src/platform/cluster/index.js';
import { MANAGED_SELECTOR } from '../../src/kube/index.js';
import { skipNote } from '../support/skip-note.js';

const ROOT = join(import.meta.dirname, '../..');
const kubeconfig = process.env.ATTESTORM_TEST_KUBECONFIG;
const context = process.env.ATTESTORM_TEST_CONTEXT;
const reason =
  !kubeconfig || !context
    ? 'no real cluster named: set ATTESTORM_TEST_KUBECONFIG and ATTESTORM_TEST_CONTEXT (attestorm cluster up prints both)'
    : !existsSync(kubeconfig)
      ? `${kubeconfig} does not exist`
      : null;
if (reason) skipNote('every test of test/cluster/real-cluster.cluster.test.ts', reason);

const dir = mkdtempSync(join(tmpdir(), 'attestorm-real-cluster-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

function start(args: string[]): { child: ChildProcess; done: Promise<Ran> } {
  const child = spawn(process.execPath, [join(ROOT, 'bin/attestorm.js'), ...args], { cwd: ROOT, env: { ...process.env, KUBECONFIG: kubeconfig } });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const done = new Promise<Ran>((resolve) => child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr })));
  return { child, done };
}

const cli = (args: string[]) => start(args).done;
const target = () => ['--context', context!, '--kubeconfig', kubeconfig!];
const kc = () => loadKubeConfig(parseClusterTarget({ context: context! }), kubeconfig);

type Results = { status: string; platform: any; environment: any; scenario: any; variants: any[] };
const readResults = (out: string): Results => JSON.parse(readFileSync(join(out, 'results.json'), 'utf8'));
const samplesOf = (out: string, variant: string) =>
  readFileSync(join(out, `${variant}.r1`, 'samples.ndjson'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

/** What a dry-run cleanup would remove, namespaces still Terminating after their delete waited out. */
async function leftovers(timeoutMs = 180_000): Promise<string[]> {
  const list = async () => (await cleanupCluster(kc(), { dryRun: true })).filter((x) => !x.startsWith('socket directories'));
  let left = await list();
  for (const until = Date.now() + timeoutMs; left.length && Date.now() < until; left = await list()) await new Promise((r) => setTimeout(r, 2000));
  return left;
}

/** Socket directories of runs on the node: this host for the local cluster, inside the node container for kind. */
const socketDirs = (): string[] => {
  if (context?.startsWith('kind-')) {
    const node = `${context.slice(5)}-control-plane`;
    const out = execFileSync('docker', ['exec', node, 'sh', '-c', 'ls -1 /run/attestorm 2>/dev/null || true'], { encoding: 'utf8' });
    return out.split('\n').filter((n) => n.startsWith('atst-'));
  }
  return existsSync('/run/attestorm') ? readdirSync('/run/attestorm').filter((n) => n.startsWith('atst-')) : [];
};

describe.skipIf(reason !== null)('Kubernetes mode on a real cluster', () => {
  it('ci-kind.yaml end to end: the cluster in results.json, pre-attestation survives, disabled OOM-killed, 100 ms memory, bystanders, nothing left', async () => {
    const out = join(dir, 'ci-kind');
    const r = await cli(['run', 'scenarios/ci-kind.yaml', ...target(), '--out', out, '--no-report']);
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    const results = readResults(out);
    for (const v of results.variants)
      console.log(
        `ci-kind on ${context}: ${v.name} peak ${(v.peakMemoryBytes / 2 ** 20).toFixed(1)} MiB, OOM kills ${v.oomKills}, restarts ${v.restarts}, ok ${v.okRps}/s, bystanders ${v.bystanders?.ok}/${v.bystanders?.calls}`,
      );
    expect(results.status).toBe('complete');
    expect(results.platform.detail.serverVersion).toMatch(/^v1\.\d+\.\d+/);
    expect(results.platform.detail.nodes.length).toBeGreaterThan(0);
    expect(results.environment).toMatchObject({ oomFidelity: 'cgroup-oom', podFidelity: 'cgroup-pods' });
    expect(['v1', 'v2']).toContain(results.environment.cgroupVersion);
    const pre = results.variants.find((v) => v.name === 'pre-attestation');
    const disabled = results.variants.find((v) => v.name === 'disabled');
    expect(pre.oomKills).toBe(0);
    expect(pre.okRps).toBeGreaterThan(0);
    // The kernel's OOM kill, as the pod's status reports it (OOMKilled, or 137 with the cgroup's oom_kill risen).
    expect(disabled.oomKills, JSON.stringify(disabled.deaths)).toBeGreaterThan(0);
    expect(disabled.deaths.some((d: { cause: string }) => d.cause === 'oom-kill')).toBe(true);
    expect(pre.peakMemoryBytes).toBeLessThan(disabled.memoryLimitBytes);
    for (const v of results.variants) {
      const lines = samplesOf(out, v.name);
      // The node's /pods as large as a full node's: filler pods placed before the storm.
      expect(
        lines.some((l) => l.kind === 'event' && l.type === 'note' && /filler pods listed by the kubelet/.test(l.detail)),
        v.name,
      ).toBe(true);
      const mem = lines.filter((l) => l.kind === 'memory' && l.t >= 0);
      // Readings for the whole load; an agent the kernel killed has none while the kubelet waits to restart it.
      if (!v.restarts) expect(mem.length, v.name).toBeGreaterThan((results.scenario.resolved.duration / 1000) * 5);
      else expect(mem.length, v.name).toBeGreaterThan(0);
      // No gap longer than 1 s between readings, outside the agent's restarts.
      const starts = lines.filter((l) => l.kind === 'event' && l.type === 'agent-start').map((l) => l.t);
      for (let i = 1; i < mem.length; i++) {
        const gap = mem[i].t - mem[i - 1].t;
        const restarted = starts.some((s) => s >= mem[i - 1].t - 5000 && s <= mem[i].t + 5000);
        if (!restarted) expect(gap, `${v.name}: gap between memory readings at t=${mem[i].t} ms`).toBeLessThanOrEqual(1000);
      }
      // Bystander pods' calls counted apart from the storm.
      expect(v.bystanders?.calls ?? 0, `${v.name}: bystander calls`).toBeGreaterThan(0);
    }
    expect(pre.bystanders.ok, 'pre-attestation served its bystanders').toBeGreaterThan(0);
    expect(await leftovers()).toEqual([]);
    expect(socketDirs()).toEqual([]);
  }, 900_000);

  it('client native: the generator pods run native workers (the image carries them), and results.json and the report say so', async () => {
    const file = join(dir, 'native.yaml');
    writeFileSync(
      file,
      [
        'name: cluster-native',
        'description: A small storm of native workers in generator pods.',
        'duration: 8s',
        'warmup: 1s',
        'agent:',
        '  memoryLimit: 128Mi',
        '  attestors: [k8s]',
        '  rateLimits: { fetch_jwt_svid: 10 }',
        '  startTimeout: 120s',
        'variants:',
        '  - { name: pre-attestation, agent: { placement: pre-attestation } }',
        'load: { pods: 1, workersPerPod: 4, client: native, connection: per-call, deadline: 900ms, bystanders: { pods: 1, rate: 1 } }',
        '',
      ].join('\n'),
    );
    const out = join(dir, 'native');
    const r = await cli(['run', file, ...target(), '--out', out]);
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    const results = readResults(out);
    expect(results.status).toBe('complete');
    const v = results.variants[0];
    console.log(`native on ${context}: ${JSON.stringify(v.loadClient)}, ok ${v.okRps}/s, bystanders ${v.bystanders?.ok}/${v.bystanders?.calls}`);
    // Asked for and run: no fallback to h2 (which would name its reason here and as a note).
    expect(v.loadClient).toEqual({ requested: 'native', ran: 'native' });
    expect(v.okRps).toBeGreaterThan(0);
    expect(samplesOf(out, v.name).some((l) => l.kind === 'event' && /client native unavailable/.test(l.detail ?? ''))).toBe(false);
    const md = readFileSync(join(out, 'summary.md'), 'utf8');
    expect(md).toContain("workers' client");
    expect(md).not.toContain('native asked for');
    expect(await leftovers()).toEqual([]);
  }, 900_000);

  it('a second run right after, with one fault of each mapped kind: each carried out in the cluster and recorded with its recovery', async () => {
    // Started at once after the first run: its namespaces may still be terminating.
    const file = join(dir, 'faults.yaml');
    writeFileSync(
      file,
      [
        'name: cluster-faults',
        'description: One fault of each kind Kubernetes mode carries out, under a small storm.',
        'duration: 24s',
        'warmup: 1s',
        'agent:',
        '  memoryLimit: 160Mi',
        '  attestors: [k8s]',
        '  rateLimits: { fetch_jwt_svid: 10 }',
        '  startTimeout: 120s',
        'variants:',
        '  - { name: pre-attestation, agent: { placement: pre-attestation } }',
        'load: { pods: 2, workersPerPod: 4, connection: per-call, deadline: 900ms, retry: backoff, bystanders: { pods: 1, rate: 2 } }',
        'faults:',
        '  - { at: 3s, action: agent-kill }',
        '  - { at: 10s, for: 4s, action: memory-squeeze, to: 120Mi }',
        '  - { at: 17s, action: pod-churn, count: 1 }',
        '',
      ].join('\n'),
    );
    const out = join(dir, 'faults');
    const r = await cli(['run', file, ...target(), '--out', out, '--no-report']);
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    const results = readResults(out);
    expect(results.status).toBe('complete');
    const v = results.variants[0];
    const faults: any[] = v.faults ?? [];
    expect(faults.map((f) => f.action)).toEqual(['agent-kill', 'memory-squeeze', 'pod-churn']);
    const [kill, squeeze, churn] = faults;
    for (const f of faults)
      console.log(
        `fault on ${context}: ${f.action} ${f.error ? `not applied: ${f.error}` : `applied at ${f.startedAtMs} ms`}, agent answered again after ${f.recovery.agentReadyMs} ms, bystanders ok again after ${f.recovery.bystanderOkMs} ms`,
      );
    // agent-kill: the pod deleted, its DaemonSet's replacement answered a real call again.
    expect(kill.error, JSON.stringify(kill)).toBeUndefined();
    expect(kill.startedAtMs).not.toBeNull();
    expect(kill.recovery.agentReadyMs, JSON.stringify(kill)).not.toBeNull();
    expect(v.restarts).toBeGreaterThanOrEqual(1);
    // memory-squeeze: resized in place, or recorded as not applied with the API server's own words.
    if (squeeze.error !== undefined) expect(squeeze.error).toMatch(/resiz/i);
    else expect(squeeze.startedAtMs).not.toBeNull();
    // pod-churn: a storm pod deleted and another created under a new name.
    expect(churn.error, JSON.stringify(churn)).toBeUndefined();
    expect(churn.startedAtMs).not.toBeNull();
    expect(await leftovers()).toEqual([]);
    expect(socketDirs()).toEqual([]);
  }, 900_000);

  it('a runner killed with SIGKILL mid-run leaves its namespace; kind cleanup removes every labelled object and socket directory', async () => {
    const out = join(dir, 'killed');
    const run = start(['run', 'scenarios/ci-kind.yaml', ...target(), '--duration', '60s', '--out', out, '--no-report']);
    const core = kc().makeApiClient(CoreV1Api);
    // Killed once its storm runs: the generator pods of the first variant are up.
    let running = false;
    for (const until = Date.now() + 300_000; !running && Date.now() < until && run.child.exitCode === null;) {
      await new Promise((r) => setTimeout(r, 1000));
      const pods = await core.listPodForAllNamespaces({ labelSelector: `${MANAGED_SELECTOR},attestorm.dev/role=generator` });
      running = pods.items.some((p) => p.status?.phase === 'Running');
    }
    expect(running, 'the run reached its storm before being killed').toBe(true);
    run.child.kill('SIGKILL');
    await run.done;
    // What a killed runner leaves: its namespace (the test would pass vacuously otherwise).
    expect((await cleanupCluster(kc(), { dryRun: true })).some((x) => x.startsWith('namespace/'))).toBe(true);
    const c = await cli(['kind', 'cleanup', ...target()]);
    expect(c.code, c.stderr).toBe(0);
    expect(c.stdout).toMatch(/deleted namespace\//);
    expect(await leftovers()).toEqual([]);
    expect(socketDirs()).toEqual([]);
  }, 900_000);
});
