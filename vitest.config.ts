// Two projects: fast unit tests run in parallel; slow tests (real load, real OOM kills,
// browsers) run one file at a time so they do not fight over the machine's two cores.
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// `npm test` runs the unit project, then the slow project. With ATTESTORM_TEST_JSON_DIR set (.ci/run
// sets it) each run also writes <dir>/<project>.json, from which CI prints one closing line;
// ATTESTORM_TEST_JSON_NAME names the file instead (test:kind runs the cluster project as `kind`).
const jsonDir = process.env.ATTESTORM_TEST_JSON_DIR;
const project = process.env.ATTESTORM_TEST_JSON_NAME || (process.argv[process.argv.indexOf('--project') + 1] ?? 'all');
const setupFiles = ['test/support/no-job-summary.ts'];

/**
 * The real-cluster files by name, the one that takes nodes away (node-loss) last: it leaves the
 * cluster smaller. Other projects keep vitest's own order.
 */
class ClusterOrder extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    if (!files.some((f) => f.moduleId.endsWith('.cluster.test.ts'))) return super.sort(files);
    const last = (f: TestSpecification) => (f.moduleId.includes('node-loss') ? 1 : 0);
    return [...files].sort((a, b) => last(a) - last(b) || a.moduleId.localeCompare(b.moduleId));
  }
}

export default defineConfig({
  test: {
    sequence: { sequencer: ClusterOrder },
    ...(jsonDir ? { reporters: ['default', ['json', { outputFile: `${jsonDir}/${project}.json` }]] } : {}),
    projects: [
      {
        test: {
          name: 'unit',
          setupFiles,
          include: ['test/**/*.test.ts'],
          // Each of the others is a project of its own: with the cluster variables exported, a
          // cluster file here would start real-cluster storms under the unit timeout.
          exclude: ['test/**/*.slow.test.ts', 'test/**/*.cluster.test.ts', 'test/**/*.vm.test.ts'],
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'slow',
          setupFiles,
          include: ['test/**/*.slow.test.ts'],
          fileParallelism: false,
          testTimeout: 300_000,
          hookTimeout: 120_000,
        },
      },
      {
        // A real Kubernetes cluster (named by ATTESTORM_TEST_KUBECONFIG and ATTESTORM_TEST_CONTEXT):
        // `npm run test:cluster`, which .ci/run runs after `attestorm cluster up`.
        test: {
          name: 'cluster',
          setupFiles,
          include: ['test/**/*.cluster.test.ts'],
          fileParallelism: false,
          testTimeout: 900_000,
          hookTimeout: 120_000,
        },
      },
      {
        // cgroup v2 hosts booted under QEMU (test/vm): `npm run test:vm`, which .ci/run runs. One
        // guest at a time; a guest's run is minutes under emulation.
        test: {
          name: 'vm',
          setupFiles,
          include: ['test/**/*.vm.test.ts'],
          fileParallelism: false,
          testTimeout: 15 * 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
