// attestorm bisect end to end on a synthetic agent history: every step built by the history's own
// build.sh into a reference variant's binDir, stormed in a real memory cgroup and judged by the
// variant's verdict (oomKilled: false). From the first bad commit on, the built agent runs without
// its limiter and is OOM-killed; the commit git tests first, after the first bad
// one, does not build and is skipped (one just before it would leave git two candidates). The bisect must name the
// first bad commit, leave the user's repository as it was and no worktree behind, and the same step
// under `git bisect run`'s exit codes must agree.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BISECT_EXIT, bisectStep, builderFor, checkBeforeBuilding, resolveBisectSettings, runBisect, specOf } from '../../src/bisect/index.js';
import { detectCgroupHost } from '../../src/cgroup/index.js';
import { runCleanups } from '../../src/util/index.js';
import { skipNote } from '../support/skip-note.js';
import { BUILD_COMMAND, makeAgentRepo } from './support/agent-repo.js';

const { host, reason } = detectCgroupHost();
if (!host) skipNote('every test of bisect.slow.test.ts', reason);
const root = mkdtempSync(join(tmpdir(), 'attestorm-bisect-e2e-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

// A storm the limiter decides: every attestation holds a modeled 2 MiB while it runs and runs on
// after its caller gave up, so 64 workers without a limiter pile up past 128 MiB within seconds;
// 5 admitted calls a second keep a handful in flight.
const SCENARIO = `name: bisect-e2e
duration: 8s
warmup: 1s
agent:
  memoryLimit: 128Mi
  attestors: [k8s]
  kubelet: { latency: 500ms, visibilityDelay: 0s }
  k8s: { pollInterval: 500ms, maxPollAttempts: 6, shareFetches: false }
  model: { cancelAbandoned: false, attestationWorkingSet: 2Mi }
  rateLimits: { fetch_jwt_svid: 5 }
  startTimeout: 60s
variants:
  - { name: built, agent: { placement: pre-attestation } }
load:
  pods: 1
  workersPerPod: 64
  connection: per-call
  deadline: 900ms
  retry: immediate
expect:
  built: { oomKilled: false }
`;

describe.skipIf(!host)(`attestorm bisect on a synthetic agent history (${reason})`, () => {
  const repo = makeAgentRepo(join(root, 'agent'), 8, 2, [3]);
  const scenario = join(root, 'bisect-e2e.yaml');
  writeFileSync(scenario, SCENARIO);

  it('names the first bad commit, skipping the one that does not build; the checkout is only read and nothing is left', async () => {
    const refsBefore = execFileSync('git', ['for-each-ref'], { cwd: repo.dir, encoding: 'utf8' });
    const settings = await resolveBisectSettings({ scenario, source: repo.dir, good: repo.commits[0], bad: repo.commits[7], build: BUILD_COMMAND });
    const builder = builderFor(settings.build);
    await checkBeforeBuilding(specOf(settings), builder);
    const dir = join(root, 'bisect');
    const lines: string[] = [];
    const { state } = await runBisect({ dir, settings, builder, command: 'attestorm bisect (test)', say: (l) => lines.push(l) });
    await runCleanups();

    expect(state.status, lines.join('\n')).toBe('complete');
    expect(state.outcome).toMatchObject({ kind: 'first-bad', commit: repo.commits[2], subject: 'agent: attest before asking the limiter' });
    const marks = new Map(state.steps.map((s) => [repo.commits.indexOf(s.commit), s]));
    for (const [i, s] of marks) {
      if (i === 3) expect(s.mark).toBe('skip');
      else expect(s.mark, s.reason).toBe(i >= 2 ? 'bad' : 'good');
      if (s.mark === 'bad') expect(s.figures!.oomKills).toBeGreaterThan(0);
      if (s.mark === 'good') expect(s.figures!.oomKills).toBe(0);
    }
    expect([...marks.keys()]).toEqual(expect.arrayContaining([1, 2, 3]));
    expect(marks.get(3)!.reason).toMatch(/the build failed: .*this commit does not build/);

    const md = readFileSync(join(dir, 'bisect.md'), 'utf8');
    expect(md).toContain(repo.commits[2]);
    expect(existsSync(join(dir, 'bisect.html'))).toBe(true);
    for (const s of state.steps) if (s.mark !== 'skip') expect(existsSync(join(dir, s.runDir!, 'results.json'))).toBe(true);
    // The clone and the worktrees go with the search; the user's repository is as it was.
    expect(existsSync(join(dir, 'repo.git'))).toBe(false);
    expect(existsSync(join(dir, 'work'))).toBe(false);
    expect(execFileSync('git', ['for-each-ref'], { cwd: repo.dir, encoding: 'utf8' })).toBe(refsBefore);
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: repo.dir, encoding: 'utf8' })).toBe('');
    // A finished bisect asked again runs nothing.
    const again = await runBisect({ dir, settings, builder, command: 'attestorm bisect (test)', say: () => undefined });
    expect(again.alreadyDone).toBe(true);
  });

  it('bisect-step answers git bisect run: 1 on the first bad commit, 0 on its parent', async () => {
    const settings = await resolveBisectSettings({ scenario, source: repo.dir, good: repo.commits[0], bad: repo.commits[7], build: BUILD_COMMAND });
    const codes: number[] = [];
    for (const i of [2, 1]) {
      const tree = join(root, `checkout-${i}`);
      execFileSync('git', ['worktree', 'add', '--quiet', '--detach', tree, repo.commits[i]!], { cwd: repo.dir });
      try {
        const r = await bisectStep({
          workTree: tree,
          spec: specOf(settings),
          builder: builderFor(settings.build),
          binDir: null,
          out: join(root, 'steps'),
          say: () => undefined,
        });
        expect(r.commit).toBe(repo.commits[i]);
        codes.push(r.exit);
      } finally {
        execFileSync('git', ['worktree', 'remove', '--force', tree], { cwd: repo.dir });
      }
    }
    await runCleanups();
    expect(codes).toEqual([BISECT_EXIT.bad, BISECT_EXIT.good]);
    expect(readdirSync(join(root, 'steps'))).toHaveLength(2);
  });
});
