// The run command's CI flags end to end on real files: flags validated before anything runs, then a
// finished run folder post-processed (results.json gets `baseline`, JUnit written, summary appended).
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  appendStepSummary,
  CiSession,
  collectProvenance,
  fitMarkdown,
  renderStepSummary,
  scenarioHash,
  STEP_SUMMARY_LIMIT,
  type BaselineComparison,
} from '../../src/ci/index.js';
import { baselineSectionsOf } from '../../src/ci/index.js';
import { EXIT } from '../../src/errors.js';
import { expectation, results, writeRunFolder } from './fixture.js';
import { writeFixtureRun } from '../report/fixture.js';
import { mermaidBlocks, parseXyChart } from '../support/mermaid-xychart.js';
import type { RunResults } from '../../src/contract/index.js';
import { parse as parseYaml } from 'yaml';
import { findAll, parseXml } from './xml.js';
import { configProblems } from '../support/config-problems.js';

let tmp: string;
let baseDir: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), 'attestorm-ci-'));
  baseDir = await writeRunFolder(
    tmp,
    'base',
    results({
      commit: 'c'.repeat(40),
      variants: [
        { name: 'pre', peakMiB: 100 },
        { name: 'post', peakMiB: 60 },
      ],
    }),
  );
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const quiet = { env: {}, log: () => {} };

describe('CiSession.fromFlags: bad input fails before anything runs', () => {
  const problemsOf = configProblems;

  it('a missing baseline', () => {
    expect(problemsOf(() => CiSession.fromFlags({ baseline: path.join(tmp, 'nope') }, ['quick'], quiet))).toEqual([
      `--baseline ${path.join(tmp, 'nope')}: no such file or folder`,
    ]);
  });

  it('a folder without results.json, a file that is not JSON', async () => {
    const empty = path.join(tmp, 'empty');
    await writeFile(path.join(tmp, 'bad.json'), '{nope');
    await mkdir(empty, { recursive: true });
    expect(problemsOf(() => CiSession.fromFlags({ baseline: empty }, ['quick'], quiet))[0]).toMatch(
      /^--baseline .*empty: cannot read .*results\.json \(ENOENT\); give a run folder or its results\.json$/,
    );
    expect(problemsOf(() => CiSession.fromFlags({ baseline: path.join(tmp, 'bad.json') }, ['quick'], quiet))[0]).toMatch(
      /^--baseline .*bad\.json is not valid JSON/,
    );
  });

  it('a baseline of another scenario is refused before the run', () => {
    expect(problemsOf(() => CiSession.fromFlags({ baseline: baseDir }, ['scaled'], quiet))).toEqual([
      `--baseline ${baseDir}: refused: it is a run of scenario "quick", this run is of "scaled"`,
    ]);
  });

  it('--tolerance without --baseline, a bad tolerance and a junit path in a missing folder: all at once', () => {
    const problems = problemsOf(() => CiSession.fromFlags({ tolerance: ['5'], junit: path.join(tmp, 'no/such/junit.xml') }, ['quick'], quiet));
    expect(problems).toEqual([
      '--tolerance applies to a --baseline comparison; add --baseline <run folder or results.json>',
      '--tolerance "5": a bare tolerance must be a percentage like 10% (or name a figure: peakMemory=5%)',
      `--junit ${path.join(tmp, 'no/such/junit.xml')}: folder ${path.join(tmp, 'no/such')} does not exist (create it first)`,
    ]);
  });

  it('GITHUB_STEP_SUMMARY is checked like --step-summary', () => {
    expect(problemsOf(() => CiSession.fromFlags({}, ['quick'], { env: { GITHUB_STEP_SUMMARY: tmp } }))).toEqual([
      `GITHUB_STEP_SUMMARY ${tmp} is a folder; give a file path`,
    ]);
  });

  it('with several scenarios the baseline is a parent folder holding <name>/results.json', () => {
    expect(problemsOf(() => CiSession.fromFlags({ baseline: baseDir }, ['quick', 'scaled'], quiet))[0]).toContain(
      'with several scenarios, give the folder of an earlier run of the same scenarios (it must hold quick/results.json)',
    );
  });

  it('a parent folder of an earlier multi-scenario run serves each scenario its own baseline', async () => {
    const parent = path.join(tmp, 'multi');
    await writeRunFolder(parent, 'quick', results({ variants: [{ name: 'pre', peakMiB: 100 }] }));
    await writeRunFolder(parent, 'other', results({ scenario: 'other', variants: [{ name: 'pre', peakMiB: 100 }] }));
    expect(CiSession.fromFlags({ baseline: parent }, ['quick', 'other'], quiet).active).toBe(true);
  });

  it('no CI flags: inactive, the run exit code passes through', async () => {
    const s = CiSession.fromFlags({}, ['quick'], quiet);
    expect(s.active).toBe(false);
    expect(await s.afterRun({ runDir: '/nonexistent', results: null, exitCode: 3 })).toBe(3);
  });
});

describe('CiSession.afterRun', () => {
  it('a regression: exit 1, baseline in results.json, console table, JUnit and step summary written', async () => {
    const after = results({
      variants: [
        { name: 'pre', peakMiB: 150, expectations: [expectation('oomKilled', 'passed', 'not OOM-killed')] },
        { name: 'post', peakMiB: 60 },
      ],
    });
    const runDir = await writeRunFolder(tmp, 'regressed', after);
    await writeFile(path.join(runDir, 'report.html'), '<!doctype html>');
    await writeFile(path.join(runDir, 'summary.md'), '# attestorm quick\n');
    const junit = path.join(tmp, 'junit.xml');
    const summary = path.join(tmp, 'summary.md');
    await writeFile(summary, '# earlier step\n');
    const logged: string[] = [];
    const s = CiSession.fromFlags({ baseline: path.join(baseDir, 'results.json'), tolerance: '10%', junit, stepSummary: summary }, ['quick'], {
      env: {},
      log: (t) => logged.push(t),
    });
    expect(await s.afterRun({ runDir, results: after, exitCode: EXIT.OK })).toBe(EXIT.EXPECTATIONS_FAILED);

    const written = JSON.parse(await readFile(path.join(runDir, 'results.json'), 'utf8')) as { baseline: BaselineComparison; variants: unknown[] };
    expect(written.variants).toHaveLength(2);
    expect(written.baseline.from).toBe(path.join(baseDir, 'results.json'));
    expect(written.baseline.regressed).toBe(1);
    expect(written.baseline.baselineCommit).toBe('c'.repeat(40));
    const fig = written.baseline.figures.find((f) => f.variant === 'pre' && f.figure === 'peakMemory')!;
    expect(fig).toMatchObject({ before: 100 * 2 ** 20, after: 150 * 2 ** 20, tolerance: '10%', verdict: 'regressed' });

    const text = logged.join('');
    expect(text).toContain(`baseline ${path.join(baseDir, 'results.json')} (commit cccccccccccc): 1 regressed, 0 improved, 11 unchanged`);
    expect(text).toMatch(/\| pre +\| peak memory +\| 100\.0 MiB +\| 150\.0 MiB +\| \+50\.0% +\| 10% +\| REGRESSED +\| new 150\.0 MiB > baseline 100\.0 MiB/);

    // The reports show the comparison from results.json (attestorm run renders them again with it).
    const [section] = baselineSectionsOf(written);
    expect(section!.title).toBe(`Against the baseline (${path.join(baseDir, 'results.json')})`);
    expect(section!.markdown.some((l) => l.startsWith('| pre | peak memory | 100.0 MiB | 150.0 MiB | +50.0% | 10% | **REGRESSED** |'))).toBe(true);
    expect(section!.html).toContain('data-testid="baseline"');

    const doc = parseXml(await readFile(junit, 'utf8'));
    expect(findAll(doc, 'failure').map((f) => f.attrs['message'])).toEqual([expect.stringMatching(/^pre: peak memory regressed: peak memory \+50\.0%/)]);

    const md = await readFile(summary, 'utf8');
    expect(md.startsWith('# earlier step\n### ❌ failed — attestorm quick')).toBe(true);
    expect(md).toContain('| pre | peak memory | 100.0 MiB | 150.0 MiB | +50.0% | 10% | **REGRESSED** |');
    expect(md).toContain('11 figures unchanged within tolerance');
    // Paths outside the working folder are named, never given as the runner's absolute paths.
    expect(md).toContain('- run folder: `regressed`');
    expect(md).toContain('- report.html: `report.html`');
    expect(md).toContain('- JUnit XML: `junit.xml`');
    expect(md).not.toContain(tmp);
  });

  it('complete(): the comparison goes into the results before the runner writes them; afterRun leaves the file alone', async () => {
    const after = results({
      variants: [
        { name: 'pre', peakMiB: 150 },
        { name: 'post', peakMiB: 60 },
      ],
    });
    const logged: string[] = [];
    const s = CiSession.fromFlags({ baseline: baseDir, tolerance: '10%' }, ['quick'], { env: {}, log: (t) => logged.push(t) });
    const sections = s.complete(after);
    expect((after.baseline as unknown as BaselineComparison).regressed).toBe(1);
    expect(sections.map((x) => x.title)).toEqual([`Against the baseline (${path.join(baseDir, 'results.json')})`]);
    // The runner writes the completed results once; afterRun must not write them again.
    const runDir = await writeRunFolder(tmp, 'completed', after);
    const file = path.join(runDir, 'results.json');
    const before = (await stat(file)).mtimeMs;
    const written = await readFile(file, 'utf8');
    expect(await s.afterRun({ runDir, results: after, exitCode: EXIT.OK })).toBe(EXIT.EXPECTATIONS_FAILED);
    expect(await readFile(file, 'utf8')).toBe(written);
    expect((await stat(file)).mtimeMs).toBe(before);
    expect(logged.join('')).toContain('1 regressed');
    // Without a baseline for the scenario, nothing is added.
    const other = results({ scenario: 'other', variants: [{ name: 'pre', peakMiB: 1 }] });
    expect(CiSession.fromFlags({ junit: path.join(tmp, 'c.xml') }, ['other'], quiet).complete(other)).toEqual([]);
    expect(other.baseline).toBeUndefined();
  });

  it('the same run against a looser tolerance passes; an improvement never fails', async () => {
    const after = results({
      variants: [
        { name: 'pre', peakMiB: 108 },
        { name: 'post', peakMiB: 20 },
      ],
    });
    const runDir = await writeRunFolder(tmp, 'improved', after);
    const s = CiSession.fromFlags({ baseline: baseDir }, ['quick'], quiet);
    expect(await s.afterRun({ runDir, results: after, exitCode: EXIT.OK })).toBe(EXIT.OK);
    const written = JSON.parse(await readFile(path.join(runDir, 'results.json'), 'utf8')) as { baseline: BaselineComparison };
    expect(written.baseline.improved).toBe(1);
    expect(written.baseline.regressed).toBe(0);
    // A stricter copy of the same gate fails the same run.
    const strict = CiSession.fromFlags({ baseline: baseDir, tolerance: 'peakMemory=5%' }, ['quick'], quiet);
    expect(await strict.afterRun({ runDir, results: after, exitCode: EXIT.OK })).toBe(EXIT.EXPECTATIONS_FAILED);
  });

  it('keeps a worse run exit code (expectations failed, run failed) as it is', async () => {
    const after = results({ variants: [{ name: 'pre', peakMiB: 150 }] });
    const runDir = await writeRunFolder(tmp, 'failed', after);
    const s = CiSession.fromFlags({ baseline: baseDir }, ['quick'], quiet);
    expect(await s.afterRun({ runDir, results: after, exitCode: EXIT.RUN_FAILED })).toBe(EXIT.RUN_FAILED);
  });

  it('JUnit holds every scenario of one invocation', async () => {
    const junit = path.join(tmp, 'multi.xml');
    const s = CiSession.fromFlags({ junit }, ['quick', 'other'], quiet);
    const a = results({ variants: [{ name: 'pre', peakMiB: 1, expectations: [expectation('oomKilled', 'passed', 'ok')] }] });
    const b = results({ scenario: 'other', variants: [{ name: 'post', peakMiB: 1, expectations: [expectation('oomKilled', 'passed', 'ok')] }] });
    await s.afterRun({ runDir: await writeRunFolder(tmp, 'a', a), results: a, exitCode: 0 });
    await s.afterRun({ runDir: await writeRunFolder(tmp, 'b', b), results: b, exitCode: 0 });
    const doc = parseXml(await readFile(junit, 'utf8'));
    expect(findAll(doc, 'testsuite').map((x) => x.attrs['name'])).toEqual(['quick.pre', 'other.post']);
  });
});

describe('the job summary', () => {
  it('is written once per run, by attestorm run, with its charts as Mermaid and no absolute paths', async () => {
    const runDir = await writeFixtureRun({ parent: tmp, name: 'charted' });
    const r = JSON.parse(await readFile(path.join(runDir, 'results.json'), 'utf8')) as RunResults;
    const file = path.join(tmp, 'job-summary.md');
    await writeFile(file, '');
    const s = CiSession.fromFlags({}, [r.scenario.name], { env: { GITHUB_STEP_SUMMARY: file }, log: () => {} });
    await s.afterRun({ runDir, results: r, exitCode: EXIT.OK });
    const md = await readFile(file, 'utf8');
    expect(md.match(/^### .* — attestorm storm-fixture$/gm)).toHaveLength(1);
    const charts = mermaidBlocks(md).map(parseXyChart);
    expect(charts.map((c) => c.title)).toEqual(['Agent memory (MiB)', 'Calls served per second', 'Calls rejected per second']);
    expect(md).toContain('Lines, in order: pre-attestation (green), post-attestation (orange), disabled (pink).');
    expect(md).not.toContain(tmp);
    expect(md).not.toContain('![');
  });

  it('the workflow leaves it to attestorm run: no step appends summary.md, a note only when the run wrote nothing', async () => {
    type Step = { run?: string; uses?: string };
    const root = path.join(import.meta.dirname, '../..');
    const wf = parseYaml(await readFile(path.join(root, '.github/workflows/attestorm.yml'), 'utf8')) as { jobs: Record<string, { steps: Step[] }> };
    // A job that uses the repository's own action runs that action's steps.
    const action = parseYaml(await readFile(path.join(root, 'action.yml'), 'utf8')) as { runs: { steps: Step[] } };
    for (const job of Object.values(wf.jobs)) {
      const steps = job.steps.flatMap((st) => (st.uses === './' ? action.runs.steps : [st]));
      const writers = steps.filter((st) => String(st.run ?? '').includes('GITHUB_STEP_SUMMARY'));
      expect(writers).toHaveLength(1);
      const run = writers[0]!.run!;
      expect(run).toMatch(/node (bin\/attestorm\.js|"\$ATTESTORM") (run|"\$\{args\[@\]\}")/);
      expect(run).not.toContain('summary.md');
      expect(run).toMatch(/\[ -s "\$GITHUB_STEP_SUMMARY" \] \|\| echo|\[ ! -s "\$GITHUB_STEP_SUMMARY" \]; then\s+echo/);
    }
  });
});

describe('step summary', () => {
  it('links the workflow run artifacts on GitHub', () => {
    const md = renderStepSummary({
      results: results({ variants: [{ name: 'pre', peakMiB: 100 }] }),
      runDir: 'reports/x',
      env: { GITHUB_SERVER_URL: 'https://github.com', GITHUB_REPOSITORY: 'o/r', GITHUB_RUN_ID: '42' },
    });
    expect(md).toContain('### ✅ passed — attestorm quick');
    expect(md).toContain("[this workflow run's uploaded artifacts](https://github.com/o/r/actions/runs/42#artifacts)");
  });

  it('a summary bigger than the limit is cut at a line with a note, and the file stays under 1 MiB', async () => {
    const many = results({ variants: Array.from({ length: 12_000 }, (_, i) => ({ name: `variant-${i}-${'x'.repeat(40)}`, peakMiB: 100 })) });
    const md = renderStepSummary({ results: many, runDir: 'r' });
    expect(Buffer.byteLength(md)).toBeGreaterThan(STEP_SUMMARY_LIMIT);
    const file = path.join(tmp, 'big.md');
    await writeFile(file, 'x'.repeat(1000) + '\n');
    const res = appendStepSummary(file, md, 'results.json');
    expect(res.truncated).toBe(true);
    const size = (await stat(file)).size;
    expect(size).toBeLessThanOrEqual(STEP_SUMMARY_LIMIT);
    expect(size).toBeGreaterThan(STEP_SUMMARY_LIMIT - 1000);
    const text = await readFile(file, 'utf8');
    expect(text).toMatch(/> ✂️ Summary cut to stay under GitHub's 1 MiB step-summary limit: \d+ more lines; everything is in results\.json\.\n\n$/);
    // Every kept table row is whole.
    const rows = text.split('\n').filter((l) => l.startsWith('| variant-'));
    expect(rows.every((r) => r.endsWith('|'))).toBe(true);
    // A file already at the limit gets nothing more.
    expect(appendStepSummary(file, md, 'results.json').skipped).toMatch(/already holds/);
  });

  it('fitMarkdown leaves a small summary alone', () => {
    expect(fitMarkdown('a\nb\n', 100, 'x')).toEqual({ text: 'a\nb\n', truncated: false });
  });
});

describe('provenance', () => {
  // A checkout of its own (git init, one commit, then an edit): wherever this project is checked out
  // from (a tarball, a folder that is no git checkout), the test has the checkout it reads.
  const haveGit = (() => {
    try {
      execFileSync('git', ['--version'], { stdio: 'ignore' });
      return true;
    } catch {
      console.warn('skipping the provenance checkout test: git is not installed');
      return false;
    }
  })();
  it.skipIf(!haveGit)('records the checkout commit, branch and dirty flag, tool version, scenario hash and machine', async () => {
    const root = path.join(tmp, 'checkout');
    await mkdir(root);
    const g = (...args: string[]) =>
      execFileSync('git', ['-C', root, '-c', 'user.name=t', '-c', 'user.email=t@example.org', ...args], { encoding: 'utf8' }).trim();
    g('init', '-q', '-b', 'main');
    await writeFile(path.join(root, 'file'), 'a\n');
    g('add', 'file');
    g('commit', '-q', '-m', 'one');
    const p = collectProvenance({ projectRoot: root, toolVersion: '0.1.0', resolvedScenario: { b: 1, a: { d: 2, c: 3 } }, env: {} });
    expect(p.git).toEqual({ commit: g('rev-parse', 'HEAD'), dirty: false, branch: 'main' });
    await writeFile(path.join(root, 'file'), 'b\n');
    expect(collectProvenance({ projectRoot: root, toolVersion: '0.1.0', resolvedScenario: {}, env: {} }).git?.dirty).toBe(true);
    expect(p.tool).toEqual({ name: 'attestorm', version: '0.1.0' });
    expect(p.scenarioHash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(p.machine.cpus).toBeGreaterThan(0);
    expect(p.ci).toBeNull();
  });

  it('the scenario hash ignores key order and changes with any setting', () => {
    expect(scenarioHash({ a: 1, b: { c: 2, d: 3 } })).toBe(scenarioHash({ b: { d: 3, c: 2 }, a: 1 }));
    expect(scenarioHash({ a: 1, b: { c: 2, d: 3 } })).not.toBe(scenarioHash({ a: 1, b: { c: 2, d: 4 } }));
  });

  it('git is null outside a checkout (a folder that is not the top of a work tree)', async () => {
    const p = collectProvenance({ projectRoot: tmp, toolVersion: '0', resolvedScenario: {}, env: { GITHUB_ACTIONS: 'true', GITHUB_RUN_ID: '7' } });
    expect(p.git).toBeNull();
    expect(p.ci).toMatchObject({ system: 'github-actions', runId: '7' });
  });
});
