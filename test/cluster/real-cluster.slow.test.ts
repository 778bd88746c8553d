// Kubernetes mode on a REAL cluster: runs only when one is named (ATTESTORM_TEST_KUBECONFIG and
// ATTESTORM_TEST_CONTEXT, e.g. from `attestorm cluster up`), and otherwise skips saying so. The
// shipped ci-kind scenario end to end through the CLI, then what a real cluster must show: the
// cluster's facts and way of measuring in results.json, pre-attestation not OOM-killed, a memory
// series at ~100 ms without gaps, and nothing labelled (nor any socket directory) left behind.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupCluster, loadKubeConfig, parseClusterTarget } from '../../src/kube/index.js';
import { skipNote } from '../support/skip-note.js';

const ROOT = join(import.meta.dirname, '../..');
const kubeconfig = process.env.ATTESTORM_TEST_KUBECONFIG;
const context = process.env.ATTESTORM_TEST_CONTEXT;
const reason = !kubeconfig || !context ? 'no real cluster named: set ATTESTORM_TEST_KUBECONFIG and ATTESTORM_TEST_CONTEXT (attestorm cluster up prints both)' : !existsSync(kubeconfig) ? `${kubeconfig} does not exist` : null;
if (reason) skipNote('every test of test/cluster/real-cluster.slow.test.ts', reason);

const dir = mkdtempSync(join(tmpdir(), 'attestorm-real-cluster-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin/attestorm.js'), ...args], { cwd: ROOT, env: { ...process.env, KUBECONFIG: kubeconfig } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

describe.skipIf(reason !== null)('Kubernetes mode on a real cluster', () => {
  it('ci-kind.yaml end to end: the cluster in results.json, pre-attestation survives, 100 ms memory, nothing left', async () => {
    const out = join(dir, 'ci-kind');
    const r = await cli(['run', 'scenarios/ci-kind.yaml', '--context', context!, '--kubeconfig', kubeconfig!, '--out', out, '--no-report']);
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8'));
    expect(results.status).toBe('complete');
    expect(results.platform.detail.serverVersion).toMatch(/^v1\.\d+\.\d+/);
    expect(results.platform.detail.nodes.length).toBeGreaterThan(0);
    expect(results.environment).toMatchObject({ oomFidelity: 'cgroup-oom', podFidelity: 'cgroup-pods' });
    expect(['v1', 'v2']).toContain(results.environment.cgroupVersion);
    const pre = results.variants.find((v: { name: string }) => v.name === 'pre-attestation');
    expect(pre.oomKills).toBe(0);
    expect(pre.peakMemoryBytes).toBeGreaterThan(0);
    for (const v of results.variants) {
      const mem = readFileSync(join(out, `${v.name}.r1`, 'samples.ndjson'), 'utf8').trim().split('\n').map((l) => JSON.parse(l)).filter((l) => l.kind === 'memory' && l.t >= 0);
      expect(mem.length, v.name).toBeGreaterThan(results.scenario.resolved.duration / 1000 * 5);
      const gaps = mem.slice(1).map((m: { t: number }, i: number) => m.t - mem[i].t);
      const restarts = v.restarts ?? 0;
      if (!restarts) expect(Math.max(...gaps), `${v.name}: longest gap between memory readings (ms)`).toBeLessThanOrEqual(1000);
    }
    // Nothing labelled left: a dry-run cleanup finds no namespace or cluster role. A real namespace
    // is Terminating for a while after its delete (the last variant's right after the run): waited for.
    const kc = loadKubeConfig(parseClusterTarget({ context: context! }), kubeconfig);
    const leftovers = async () => (await cleanupCluster(kc, { dryRun: true })).filter((x) => !x.startsWith('socket directories'));
    let left = await leftovers();
    for (const until = Date.now() + 120_000; left.length && Date.now() < until; left = await leftovers()) await new Promise((r) => setTimeout(r, 2000));
    expect(left).toEqual([]);
    // On a cluster whose node is this host, the runs' socket directories are gone too.
    if (existsSync('/run/attestorm')) expect(readdirSync('/run/attestorm').filter((n) => n.startsWith('atst-'))).toEqual([]);
  }, 600_000);
});
