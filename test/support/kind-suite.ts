// `npm run test:kind`: the real-cluster tests (vitest's `cluster` project) on a kind cluster made
// here. Uses the Docker engine the environment names, or starts kind mode's own and stops it after;
// creates the cluster with `attestorm kind up` (the local node image where kindest/node cannot
// run or be pulled), runs the tests against it, deletes it. `-- --nodes 3` for three nodes;
// `-- --if-cached` (.ci/run) skips, saying why, where Docker is missing or the local node image is
// not cached yet (building it would take most of CI's budget); other arguments after `--` go to vitest.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { engineDown, engineForKind, engineUp, ensureKindBinary, kindClusterUp, kindLayout, nodeImageArchive } from '../../src/kind/index.js';
import { kindDown, runTool } from '../../src/kind/index.js';
import { onPath } from '../../src/local-cluster/index.js';
import { onCleanup } from '../../src/util/index.js';

const ROOT = join(import.meta.dirname, '../..');
const log = (s: string) => process.stderr.write(`test:kind: ${s}\n`);
const args = process.argv.slice(2);
const nodesAt = args.indexOf('--nodes');
const nodes = nodesAt >= 0 ? Number(args.splice(nodesAt, 2)[1]) : 1;
if (!Number.isInteger(nodes) || nodes < 1 || nodes > 9) throw new Error(`--nodes must be an integer from 1 to 9, got ${args[nodesAt + 1]}`);
const ifCachedAt = args.indexOf('--if-cached');
const ifCached = ifCachedAt >= 0 && args.splice(ifCachedAt, 1).length === 1;
const name = process.env.ATTESTORM_TEST_KIND_NAME || (nodes === 1 ? 'attestorm-test' : `attestorm-test-${nodes}`);

const l = kindLayout();
if (ifCached) {
  const why = !onPath('dockerd')
    ? "no dockerd on PATH (Debian's docker.io)"
    : !existsSync(nodeImageArchive(l))
      ? `the local kind node image is not cached (${nodeImageArchive(l)}): \`npm run test:kind\` or \`attestorm kind up\` builds and caches it once; --if-cached does not, to keep within CI's time on a cold cache`
      : null;
  if (why) {
    log(`skipped: ${why}`);
    process.exit(0);
  }
}
const dir = mkdtempSync(join(tmpdir(), 'attestorm-test-kind-'));
const kubeconfig = join(dir, 'kubeconfig');
process.env.KUBECONFIG = kubeconfig;

const t0 = Date.now();
const seconds = () => ((Date.now() - t0) / 1000).toFixed(0);
let engineStarted = false;
let kind = 'kind';
let env: NodeJS.ProcessEnv = process.env;
let created = false;
const tearDown = async () => {
  if (created) {
    await kindDown(name, { kind, env }).catch((err: Error) => log(`kind delete failed: ${err.message}`));
    created = false;
  }
  if (engineStarted) {
    log(`engine ${await engineDown(l)}`);
    engineStarted = false;
  }
  rmSync(dir, { recursive: true, force: true });
};
const undo = onCleanup(tearDown);

let status = 1;
try {
  try {
    env = await engineForKind(l);
  } catch {
    const up = await engineUp(l, log);
    engineStarted = up.started;
    env = await engineForKind(l);
  }
  kind = await ensureKindBinary(l, log);
  const existing = await runTool(kind, ['get', 'clusters'], { hint: '', env });
  if (existing.stdout.split('\n').includes(name)) {
    log(`deleting the kind cluster ${name} an earlier run left`);
    await kindDown(name, { kind, env });
  }
  created = true;
  const cluster = await kindClusterUp(l, { name, nodes, projectImage: true, log });
  log(`cluster ${name} up after ${seconds()} s (${cluster.nodeImage})`);
  const tests = spawn('npx', ['vitest', 'run', '--project', 'cluster', ...args], {
    cwd: ROOT,
    stdio: 'inherit',
    env: { ...env, ATTESTORM_TEST_JSON_NAME: 'kind', KUBECONFIG: kubeconfig, ATTESTORM_TEST_KUBECONFIG: kubeconfig, ATTESTORM_TEST_CONTEXT: cluster.context },
  });
  status = await new Promise<number>((resolve) => tests.once('close', (code) => resolve(code ?? 1)));
  log(`tests finished after ${seconds()} s (exit ${status})`);
} catch (err) {
  log(`failed: ${(err as Error).message}`);
} finally {
  undo();
  await tearDown();
}
process.exit(status);
