// scenarios/three-node.yaml on a REAL cluster of at least 3 nodes (ATTESTORM_TEST_KUBECONFIG and
// ATTESTORM_TEST_CONTEXT; `attestorm kind up --nodes 3` makes one), and otherwise skipped saying
// why. Through the CLI, as a user runs it: the agent under test and the storm on one worker, a
// second agent and the bystanders on the other, and results.json's cluster record of each variant.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupCluster, loadKubeConfig, parseClusterTarget } from '../../src/platform/cluster/index.js';
import { attestormCli } from '../support/attestorm-cli.js';
import { skipNote } from '../support/skip-note.js';

const kubeconfig = process.env.ATTESTORM_TEST_KUBECONFIG;
const context = process.env.ATTESTORM_TEST_CONTEXT;
const kc = () => loadKubeConfig(parseClusterTarget({ context: context! }), kubeconfig);

async function nodeCountProblem(): Promise<string | null> {
  try {
    const nodes = (await kc().makeApiClient(CoreV1Api).listNode()).items.map((n) => n.metadata?.name ?? '');
    return nodes.length >= 3
      ? null
      : `context ${context} has ${nodes.length} node(s) (${nodes.join(', ')}); three-node.yaml needs 3: attestorm kind up --nodes 3`;
  } catch (err) {
    return `cannot list the nodes of context ${context}: ${(err as Error).message}`;
  }
}

const reason =
  !kubeconfig || !context
    ? 'no real cluster named: set ATTESTORM_TEST_KUBECONFIG and ATTESTORM_TEST_CONTEXT (attestorm kind up --nodes 3 makes one)'
    : !existsSync(kubeconfig)
      ? `${kubeconfig} does not exist`
      : await nodeCountProblem();
if (reason) skipNote('every test of test/cluster/three-node.cluster.test.ts', reason);

const dir = mkdtempSync(join(tmpdir(), 'attestorm-three-node-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cli = (args: string[]) => attestormCli(args, kubeconfig);

describe.skipIf(reason !== null)('three-node.yaml on a real cluster', () => {
  it('storms one worker, keeps the other quiet, and records both and the server per variant', async () => {
    const out = join(dir, 'three-node');
    const r = await cli(['run', 'scenarios/three-node.yaml', '--context', context!, '--kubeconfig', kubeconfig!, '--out', out, '--no-report']);
    // Exit 1 is an expectation the machine's load broke; the records below must be there either way.
    expect([0, 1], r.stderr.slice(-3000)).toContain(r.code);
    const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8'));
    expect(results.status).toBe('complete');
    const names = new Set<string>(results.platform.detail.nodes.map((n: { name: string }) => n.name));
    for (const v of results.variants) {
      expect(v.cluster, v.name).toHaveLength(1);
      const c = v.cluster[0];
      expect(c.topology).toBe('three-node');
      expect(new Set([c.storm.node, c.quiet.node, c.server.node]).size, `${v.name}: three different nodes`).toBe(3);
      for (const n of [c.storm.node, c.quiet.node, c.server.node]) expect(names.has(n), n).toBe(true);
      // The storm node's figures are the variant's own; the quiet node's agent ran and was read.
      expect(c.storm.oomKills).toBe(v.oomKills);
      expect(c.storm.peakUsageBytes).toBeGreaterThan(0);
      expect(c.quiet.peakWorkingSetBytes).toBeGreaterThan(0);
      expect(c.quiet.peakWorkingSetBytes).toBeLessThanOrEqual(v.memoryLimitBytes);
      // The bystanders on the quiet node called their own agent.
      expect(c.quiet.bystanders.calls).toBeGreaterThan(0);
      expect(c.quiet.bystanders.calls).toBe(v.bystanders.calls);
      // The reference agent has no server.
      expect(c.server.pod).toBeNull();
      // Both agents' logs: the quiet one's is its own file.
      expect(statSync(join(out, `${v.name}.r1`, 'agent-quiet.log')).size, `${v.name}: quiet agent's log`).toBeGreaterThan(0);
    }
    const pre = results.variants.find((v: { name: string }) => v.name === 'pre-attestation');
    expect(pre.cluster[0].storm.oomKills).toBe(0);
    // Nothing left once the namespaces (the janitor's too) are done Terminating.
    const left = async () => (await cleanupCluster(kc(), { dryRun: true })).filter((x) => !x.startsWith('socket directories'));
    const until = Date.now() + 180_000;
    while ((await left()).length && Date.now() < until) await new Promise((r) => setTimeout(r, 2000));
    expect(await left()).toEqual([]);
  });
});
