// A kind cluster losing what a run stands on, for real: the engine restarted under a running
// storm, and the agent's node container removed (`docker rm -f`, a worker of a multi-node
// cluster). Each run must end promptly with results.json `failed` and the reason, keep the samples
// it collected, and leave nothing labelled after `attestorm kind cleanup`. Runs on the kind
// cluster `npm run test:kind` makes (ATTESTORM_TEST_CONTEXT kind-<name>); skips saying why
// elsewhere. Destructive: the removed worker's Node object is deleted afterwards.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import { dockerHost, engineDown, engineUp, kindLayout, kindNodeContainer, runTool } from '../../src/kind/index.js';
import { MANAGED_SELECTOR } from '../../src/kube/index.js';
import { cleanupCluster, loadKubeConfig, parseClusterTarget } from '../../src/platform/cluster/index.js';
import { skipNote } from '../support/skip-note.js';

const ROOT = join(import.meta.dirname, '../..');
const kubeconfig = process.env.ATTESTORM_TEST_KUBECONFIG;
const context = process.env.ATTESTORM_TEST_CONTEXT;
const kindName = context?.startsWith('kind-') ? context.slice(5) : null;
const reason =
  !kubeconfig || !context
    ? 'no real cluster named: set ATTESTORM_TEST_KUBECONFIG and ATTESTORM_TEST_CONTEXT (npm run test:kind sets both)'
    : !existsSync(kubeconfig)
      ? `${kubeconfig} does not exist`
      : !kindName
        ? `context ${context} is not a kind cluster: its nodes are not containers this host can remove or restart`
        : null;
if (reason) skipNote('every test of test/cluster/node-loss.cluster.test.ts', reason);

const dir = mkdtempSync(join(tmpdir(), 'attestorm-node-loss-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const kc = () => loadKubeConfig(parseClusterTarget({ context: context! }), kubeconfig);
const core = () => kc().makeApiClient(CoreV1Api);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Ran {
  code: number;
  stderr: string;
  /** When the process ended (epoch ms). */
  endedAt: number;
}

function start(args: string[]): { child: ChildProcess; done: Promise<Ran> } {
  const child = spawn(process.execPath, [join(ROOT, 'bin/attestorm.js'), ...args], { cwd: ROOT, env: { ...process.env, KUBECONFIG: kubeconfig } });
  let stderr = '';
  child.stdout!.resume();
  child.stderr!.on('data', (d) => (stderr += d));
  const done = new Promise<Ran>((resolve) => child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), stderr, endedAt: Date.now() })));
  return { child, done };
}

/** ci-kind's storm, one variant, long enough that the loss falls in its load phase. */
const stormRun = (out: string) =>
  start([
    'run',
    'scenarios/ci-kind.yaml',
    '--context',
    context!,
    '--kubeconfig',
    kubeconfig!,
    '--variants',
    'pre-attestation',
    '--duration',
    '90s',
    '--out',
    out,
    '--no-report',
  ]);

/** Resolves once the run's generator pods run (its storm is about to start); false when the run ended first. */
async function stormStarted(run: { child: ChildProcess }): Promise<boolean> {
  for (const until = Date.now() + 300_000; Date.now() < until && run.child.exitCode === null;) {
    const pods = await core()
      .listPodForAllNamespaces({ labelSelector: `${MANAGED_SELECTOR},attestorm.dev/role=generator` })
      .catch(() => null);
    if (pods?.items.some((p) => p.status?.phase === 'Running')) return true;
    await sleep(1000);
  }
  return false;
}

type Results = { status: string; statusDetail?: string; variants: Array<{ name: string; error?: string }> };
const readResults = (out: string): Results => JSON.parse(readFileSync(join(out, 'results.json'), 'utf8'));
const loadSeconds = (out: string) =>
  readFileSync(join(out, 'pre-attestation.r1', 'samples.ndjson'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { kind: string })
    .filter((l) => l.kind === 'load').length;

/** `attestorm kind cleanup`, then what a dry run still finds (namespaces given time to go). */
async function cleanupLeaves(): Promise<string[]> {
  const c = await start(['kind', 'cleanup', '--context', context!, '--kubeconfig', kubeconfig!]).done;
  expect(c.code, c.stderr).toBe(0);
  const list = async () => (await cleanupCluster(kc(), { dryRun: true })).filter((x) => !x.startsWith('socket directories'));
  let left = await list();
  for (const until = Date.now() + 120_000; left.length && Date.now() < until; left = await list()) await sleep(2000);
  return left;
}

/** Waits until the API server answers and every node is Ready again (after the engine came back). */
async function clusterBack(timeoutMs: number): Promise<string | null> {
  let last = '';
  for (const until = Date.now() + timeoutMs; Date.now() < until; await sleep(2000)) {
    try {
      const nodes = (await core().listNode()).items;
      const notReady = nodes.filter((n) => n.status?.conditions?.find((c) => c.type === 'Ready')?.status !== 'True').map((n) => n.metadata!.name!);
      if (!notReady.length) return null;
      last = `NotReady: ${notReady.join(', ')}`;
    } catch (err) {
      last = (err as Error).message;
    }
  }
  return last || 'no answer';
}

describe.skipIf(reason !== null)('kind: the agent node or the engine lost mid-run', () => {
  it("kind mode's engine restarted under the storm: the run ends failed within 2 min, naming the node, its samples kept; the cluster returns and cleanup leaves nothing", async (t) => {
    const l = kindLayout();
    const env = { ...process.env, DOCKER_HOST: dockerHost(l) };
    if (process.env.DOCKER_HOST && process.env.DOCKER_HOST !== dockerHost(l)) {
      skipNote('the engine restart', `DOCKER_HOST is ${process.env.DOCKER_HOST}, not kind mode's own engine: this test restarts only that one`);
      return t.skip();
    }
    const others = (await runTool('docker', ['ps', '-a', '--format', '{{.Names}}'], { hint: 'docker CLI', env })).stdout
      .split('\n')
      .filter((n) => n && !n.startsWith(`${kindName}-`));
    if (others.length) {
      skipNote('the engine restart', `the engine holds other containers (${others.join(', ')}): restarting it would stop them too`);
      return t.skip();
    }
    const out = join(dir, 'engine-restart');
    const run = stormRun(out);
    expect(await stormStarted(run), 'the run reached its storm').toBe(true);
    await sleep(10_000);
    const restartedAt = Date.now();
    // The engine is stopped either way; a cgroup its containers left is said, not a reason to stop here.
    const down = await engineDown(l).catch((err: Error) => `stopped with a complaint (${err.message})`);
    const up = await engineUp(l, () => undefined);
    console.log(`engine ${down}, then started again (${up.started ? 'started' : 'already running'}) in ${((Date.now() - restartedAt) / 1000).toFixed(1)} s`);
    const r = await run.done;
    const results = readResults(out);
    console.log(
      `engine restart: run exit ${r.code} ${((r.endedAt - restartedAt) / 1000).toFixed(0)} s after the restart began; ${results.status}: ${results.statusDetail}`,
    );
    expect(r.code, r.stderr.slice(-3000)).toBe(3);
    expect(r.endedAt - restartedAt).toBeLessThan(120_000);
    expect(results.status).toBe('failed');
    expect(results.statusDetail).toMatch(
      /the run ended in variant pre-attestation: (the agent's node \S+ (is lost|restarted)|the API server has not answered)/,
    );
    expect(r.stderr).toContain(results.statusDetail!);
    expect(results.variants.map((v) => v.name)).toEqual(['pre-attestation']);
    expect(loadSeconds(out), 'seconds of load recorded before the restart').toBeGreaterThan(0);
    // The node containers come back with their engine (kind's restart policy), and with them the cluster.
    const states = await Promise.all([`${kindName}-control-plane`].map((n) => kindNodeContainer(n, env)));
    console.log(`after the restart: ${JSON.stringify(states)}`);
    expect(await clusterBack(240_000)).toBeNull();
    expect(await cleanupLeaves()).toEqual([]);
  }, 900_000);

  it("the agent's worker node removed (docker rm -f) mid-run: the run ends failed within a minute, naming the node; cleanup leaves nothing", async (t) => {
    const nodes = (await core().listNode()).items.map((n) => n.metadata!.name!);
    if (nodes.length < 2) {
      skipNote('the worker removal', `cluster ${kindName} has ${nodes.length} node: a worker to remove needs 2 or more (npm run test:kind -- --nodes 2)`);
      return t.skip();
    }
    const out = join(dir, 'worker-removed');
    const run = stormRun(out);
    expect(await stormStarted(run), 'the run reached its storm').toBe(true);
    const agents = (await core().listPodForAllNamespaces({ labelSelector: `${MANAGED_SELECTOR},attestorm.dev/role=agent` })).items;
    const agentNodes = [...new Set(agents.map((p) => p.spec?.nodeName).filter((n): n is string => !!n))];
    if (agentNodes.length !== 1 || agentNodes[0]!.endsWith('-control-plane')) {
      run.child.kill('SIGINT');
      await run.done;
      await cleanupLeaves();
      skipNote('the worker removal', `the agent runs on ${agentNodes.join(', ') || 'no node'}: this test needs it on exactly one worker`);
      return t.skip();
    }
    const victim = agentNodes[0]!;
    await sleep(10_000);
    const removedAt = Date.now();
    const rm = await runTool('docker', ['rm', '-f', victim], { hint: 'docker CLI' });
    expect(rm.code, rm.stderr).toBe(0);
    const r = await run.done;
    const results = readResults(out);
    console.log(
      `worker ${victim} removed: run exit ${r.code} ${((r.endedAt - removedAt) / 1000).toFixed(0)} s later; ${results.status}: ${results.statusDetail}`,
    );
    expect(r.code, r.stderr.slice(-3000)).toBe(3);
    expect(r.endedAt - removedAt).toBeLessThan(60_000);
    expect(results.status).toBe('failed');
    expect(results.statusDetail).toContain(
      `the run ended in variant pre-attestation: the agent's node ${victim} is lost: its container ${victim} no longer exists in the engine`,
    );
    expect(r.stderr).toContain(results.statusDetail!);
    expect(loadSeconds(out), 'seconds of load recorded before the removal').toBeGreaterThan(0);
    expect(await cleanupLeaves()).toEqual([]);
    // The cluster goes on without it: its Node object would stay NotReady for ever.
    await core().deleteNode({ name: victim });
  }, 900_000);
});
