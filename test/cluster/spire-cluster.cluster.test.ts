// A REAL spire-agent in a REAL cluster: runs only when a cluster is named (ATTESTORM_TEST_KUBECONFIG,
// ATTESTORM_TEST_CONTEXT) and SPIRE binaries are given (SPIRE_BIN_DIR), and otherwise skips saying
// so. Through the CLI, as a user runs it: images made from the binaries, spire-server with k8s_psat
// node attestation against the API server, the agent's k8s workload attestor against the kubelet,
// the generators' entry created through the server, readiness by a real SVID fetch, a short storm.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spireBinDirProblems } from '../../src/local-cluster/index.js';
import { cleanupCluster, loadKubeConfig, parseClusterTarget } from '../../src/platform/cluster/index.js';
import { spireAgentGrammar, spireVersion, versionOf } from '../../src/spire/index.js';
import { attestormCli } from '../support/attestorm-cli.js';
import { skipNote } from '../support/skip-note.js';

const SCENARIO = join(import.meta.dirname, 'fixtures/spire-cluster.yaml');
const kubeconfig = process.env.ATTESTORM_TEST_KUBECONFIG;
const context = process.env.ATTESTORM_TEST_CONTEXT;
const binDir = process.env.SPIRE_BIN_DIR;
/** The fixture's spire-limited variant needs SPIRE's Workload API limiter: a release whose grammar has rate limits. */
async function withoutLimiter(dir: string): Promise<string | null> {
  const agent = join(dir, 'spire-agent');
  const printed = await spireVersion(agent);
  if (spireAgentGrammar(versionOf(agent, printed)).rateLimitKeys.length > 0) return null;
  return `SPIRE_BIN_DIR holds SPIRE ${printed}, which has no Workload API limiter; the fixture's spire-limited variant needs one`;
}

const reason =
  !kubeconfig || !context
    ? 'no real cluster named: set ATTESTORM_TEST_KUBECONFIG and ATTESTORM_TEST_CONTEXT (attestorm cluster up prints both)'
    : !existsSync(kubeconfig)
      ? `${kubeconfig} does not exist`
      : !binDir
        ? 'no SPIRE binaries: set SPIRE_BIN_DIR to a folder with spire-server and spire-agent'
        : (spireBinDirProblems(binDir, 'SPIRE_BIN_DIR')[0] ?? (await withoutLimiter(binDir)));
if (reason) skipNote('every test of test/cluster/spire-cluster.cluster.test.ts', reason);

const dir = mkdtempSync(join(tmpdir(), 'attestorm-spire-cluster-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cli = (args: string[]) => attestormCli(args, kubeconfig);

const kc = () => loadKubeConfig(parseClusterTarget({ context: context! }), kubeconfig);

/** What a dry-run cleanup would remove, namespaces still Terminating after their delete waited out. */
async function leftovers(timeoutMs = 180_000): Promise<string[]> {
  const list = async () => (await cleanupCluster(kc(), { dryRun: true })).filter((x) => !x.startsWith('socket directories'));
  let left = await list();
  for (const until = Date.now() + timeoutMs; left.length && Date.now() < until; left = await list()) await new Promise((r) => setTimeout(r, 2000));
  return left;
}

describe.skipIf(reason !== null)('a SPIRE variant on a real cluster', () => {
  it('runs spire-agent end to end: agent kind spire, peak memory measured, calls answered, nothing left', async () => {
    const out = join(dir, 'spire');
    const r = await cli(['run', SCENARIO, '--context', context!, '--kubeconfig', kubeconfig!, '--out', out, '--no-report']);
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8'));
    expect(results.status).toBe('complete');
    expect(results.platform.detail.serverVersion).toMatch(/^v1\.\d+\.\d+/);
    const v = results.variants.find((x: { name: string }) => x.name === 'spire-limited');
    expect(v.agent.kind).toBe('spire');
    // The cgroup's reading: a number in (0, limit], never a stand-in 0.
    expect(v.peakMemoryBytes).toBeGreaterThan(0);
    expect(v.peakMemoryBytes).toBeLessThanOrEqual(v.memoryLimitBytes);
    // The agent answered: SVIDs issued (its entry reached it, the kubelet resolved the pods). Under
    // 200 ms deadlines most calls end in the k8s attestor (a full node's /pods from the real kubelet)
    // before the limiter is reached, so rejections are not required here.
    expect(v.okRps).toBeGreaterThan(0);
    expect(v.oomKills).toBe(0);
    // The images made from the binaries, as the node lists them.
    expect(Object.keys(results.platform.detail.imageDigests).some((i) => i.includes('attestorm-spire-agent:'))).toBe(true);
    expect(await leftovers()).toEqual([]);
    if (existsSync('/run/attestorm')) expect(readdirSync('/run/attestorm').filter((n) => n.startsWith('atst-'))).toEqual([]);
  }, 600_000);
});
